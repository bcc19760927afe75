import { beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember, type Member } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

const KINDS = [
  { name: 'static', path: '/v1/qrcodes', listKey: 'qrcodes', idField: 'qr_id', urlField: 'url', batch: (items: object[]) => ({ qrcodes: items }) },
  { name: 'dynamic', path: '/v1/dynqrcodes', listKey: 'dynqrcodes', idField: 'code', urlField: 'destination_url', batch: (items: object[]) => items },
]

/** URLs with a user name or password: they show one host and open another. */
const USERINFO = ['https://paypal.com@evil.example', 'https://user:pass@x.example/', 'https://@x.example']
/** Spellings the URL parser accepts, and the one normal form each is stored as. */
const ODD_SPELLINGS: [string, string][] = [
  ['https:\\\\evil.example', 'https://evil.example/'],
  ['https:/\\evil.example/a', 'https://evil.example/a'],
  ['https:evil.example', 'https://evil.example/'],
  ['HTTPS://Example.COM:443/Path', 'https://example.com/Path'],
]
const EMOJI = '\u{1F600}'

/** URL fields and name lengths (docs/decisions.md §3), on create, batch and PATCH, for both kinds. */
export function urlRulesSuite(stack: () => Stack) {
  describe('URL rules and name lengths', () => {
    let member: Member
    const send = (method: string, path: string, body: unknown) => call(stack(), method, path, { key: member.key, body })
    beforeAll(async () => {
      member = await freshMember(stack())
    })

    for (const kind of KINDS) {
      const item = (url: string, name = 'U') => ({ [kind.urlField]: url, name })
      const count = async () => (await send('GET', `${kind.path}?limit=1000`, undefined)).body[kind.listKey].length
      const error = `${kind.urlField} must not carry a user name or password (user@host)`

      it(`${kind.name}: refuses a URL with a user name or password on create, batch and PATCH, naming the field`, async () => {
        const record = (await send('POST', kind.path, item('https://example.com/ok'))).body.created[0]
        const before = await count()
        for (const url of USERINFO) {
          expect(await send('POST', kind.path, item(url)).then((r) => [r.status, r.body])).toEqual([400, { error }])
          const batch = await send('POST', `${kind.path}/batch`, kind.batch([item('https://example.com/fine'), item(url)]))
          expect([batch.status, batch.body]).toEqual([400, { errors: [{ index: 1, error }] }])
          const patched = await send('PATCH', `${kind.path}/${record[kind.idField]}`, { [kind.urlField]: url })
          expect([patched.status, patched.body]).toEqual([400, { error }])
        }
        expect(await count()).toBe(before)
        expect((await send('GET', `${kind.path}/${record[kind.idField]}`, undefined)).body).toEqual(record)
      })

      it(`${kind.name}: stores and answers a URL in its normal form on create, batch and PATCH`, async () => {
        for (const [sent, normal] of ODD_SPELLINGS) {
          const created = await send('POST', kind.path, item(sent))
          expect(created.status).toBe(201)
          const record = created.body.created[0]
          expect(record[kind.urlField]).toBe(normal)
          expect((await send('GET', `${kind.path}/${record[kind.idField]}`, undefined)).body[kind.urlField]).toBe(normal)

          const batch = await send('POST', `${kind.path}/batch`, kind.batch([item(sent), item('https://example.com/b')]))
          expect(batch.body.created.map((r: Record<string, string>) => r[kind.urlField])).toEqual([normal, 'https://example.com/b'])

          const other = (await send('POST', kind.path, item('https://example.com/before'))).body.created[0]
          const patched = await send('PATCH', `${kind.path}/${other[kind.idField]}`, { [kind.urlField]: sent })
          expect([patched.status, patched.body[kind.urlField]]).toEqual([200, normal])
        }
        const listed = (await send('GET', `${kind.path}?limit=1000`, undefined)).body[kind.listKey] as Record<string, string>[]
        expect(listed.filter((r) => r[kind.urlField]!.includes('\\'))).toEqual([])
      })

      // docs/decisions.md §3: a URL of at most 2048 characters, a style of at most 8 KiB as JSON.
      it(`${kind.name}: takes a URL of 2048 characters and a style of 8192 bytes, and refuses one more of either on create, batch and PATCH`, async () => {
        const url = (length: number) => `https://example.com/${'u'.repeat(length - 20)}`
        const style = (bytes: number) => ({ s: 'x'.repeat(bytes - 8) }) // {"s":"…"} is 8 bytes around the text
        const urlError = `${kind.urlField} must be at most 2048 characters`
        const styleError = 'style must be at most 8192 bytes as JSON'
        const created = await send('POST', kind.path, { ...item(url(2048)), style: style(8192) })
        expect([created.status, created.body.created?.[0][kind.urlField].length, JSON.stringify(created.body.created?.[0].style).length]).toEqual([201, 2048, 8192])
        const record = created.body.created[0]
        const before = await count()
        for (const [body, error] of [[item(url(2049)), urlError], [{ ...item('https://example.com/s'), style: style(8193) }, styleError]] as const) {
          expect(await send('POST', kind.path, body).then((r) => [r.status, r.body])).toEqual([400, { error }])
          const batch = await send('POST', `${kind.path}/batch`, kind.batch([item('https://example.com/fine'), body]))
          expect([batch.status, batch.body]).toEqual([400, { errors: [{ index: 1, error }] }])
          const { name: _name, ...change } = body as Record<string, unknown>
          const patched = await send('PATCH', `${kind.path}/${record[kind.idField]}`, change)
          expect([patched.status, patched.body]).toEqual([400, { error }])
        }
        expect(await count()).toBe(before)
        expect((await send('GET', `${kind.path}/${record[kind.idField]}`, undefined)).body).toEqual(record)
      })

      it(`${kind.name}: counts a name in characters, so 200 emoji pass and 201 do not`, async () => {
        const created = await send('POST', kind.path, item('https://example.com/e', EMOJI.repeat(200)))
        expect([created.status, created.body.created?.[0].name]).toEqual([201, EMOJI.repeat(200)])
        const tooLong = await send('POST', kind.path, item('https://example.com/e', EMOJI.repeat(201)))
        expect([tooLong.status, tooLong.body]).toEqual([400, { error: 'name must be 1 to 200 characters after trimming' }])
        const id = created.body.created[0][kind.idField]
        expect((await send('PATCH', `${kind.path}/${id}`, { name: `${EMOJI.repeat(199)}é` })).status).toBe(200)
        const patched = await send('PATCH', `${kind.path}/${id}`, { name: EMOJI.repeat(201) })
        expect([patched.status, patched.body]).toEqual([400, { error: 'name must be 1 to 200 characters after trimming' }])
      })
    }

    it('redirects a short link to the normal form of its destination', async () => {
      const record = (await send('POST', '/v1/dynqrcodes', { destination_url: 'https:/\\Evil.example/a', name: 'R' })).body.created[0]
      const scan = await stack().short(`/${record.code}`)
      expect([scan.status, scan.headers.get('location')]).toEqual([302, 'https://evil.example/a'])
    })
  })
}
