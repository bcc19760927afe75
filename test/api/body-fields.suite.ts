import { beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember, type Member } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

/** Names Object.prototype carries: as body fields they are unknown fields like any other. */
const INHERITED_NAMES = ['__proto__', '__defineGetter__', 'constructor', 'toString', 'hasOwnProperty']

/** JSON text of `body` with `field` as its first member (JSON.stringify would drop `__proto__`). */
const withField = (field: string, body: object) => `{${JSON.stringify(field)}:1,${JSON.stringify(body).slice(1)}`

const KINDS = [
  { name: 'static', path: '/v1/qrcodes', listKey: 'qrcodes', idField: 'qr_id', batch: (items: string[]) => `{"qrcodes":[${items}]}`, item: { url: 'https://example.com/f', name: 'F' } },
  { name: 'dynamic', path: '/v1/dynqrcodes', listKey: 'dynqrcodes', idField: 'code', batch: (items: string[]) => `[${items}]`, item: { destination_url: 'https://example.com/f', name: 'F' } },
]

/** Body fields are checked by own keys only, on create, batch items and PATCH, for both kinds. */
export function bodyFieldsSuite(stack: () => Stack) {
  describe('body fields named like Object.prototype members', () => {
    let member: Member
    const send = (method: string, path: string, raw: string) =>
      call(stack(), method, path, { key: member.key, raw, headers: { 'content-type': 'application/json' } })
    beforeAll(async () => {
      member = await freshMember(stack())
    })

    for (const kind of KINDS) {
      const count = async () => (await call(stack(), 'GET', `${kind.path}?limit=1000`, { key: member.key })).body[kind.listKey].length
      for (const field of INHERITED_NAMES) {
        it(`${kind.name}: answers 400 naming ${field} on create, batch item and PATCH, changing nothing`, async () => {
          const before = await count()
          const created = await send('POST', kind.path, withField(field, kind.item))
          expect([created.status, created.body]).toEqual([400, { error: `unknown field "${field}"` }])
          const batch = await send('POST', `${kind.path}/batch`, kind.batch([JSON.stringify(kind.item), withField(field, kind.item)]))
          expect([batch.status, batch.body]).toEqual([400, { errors: [{ index: 1, error: `unknown field "${field}"` }] }])
          expect(await count()).toBe(before)

          const record = (await send('POST', kind.path, JSON.stringify(kind.item))).body.created[0]
          const patched = await send('PATCH', `${kind.path}/${record[kind.idField]}`, withField(field, { name: 'New' }))
          expect([patched.status, patched.body]).toEqual([400, { error: `unknown field "${field}"` }])
          expect((await call(stack(), 'GET', `${kind.path}/${record[kind.idField]}`, { key: member.key })).body).toEqual(record)
        })
      }
    }
  })
}
