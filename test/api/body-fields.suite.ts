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

  describe('text JSON allows but no field can keep', () => {
    let member: Member
    const send = (method: string, path: string, raw: string) =>
      call(stack(), method, path, { key: member.key, raw, headers: { 'content-type': 'application/json' } })
    beforeAll(async () => {
      member = await freshMember(stack())
    })
    /** The JSON text of the kind's item with `name` last, written as `rawName` (JSON text). */
    const withName = (item: object, rawName: string) => {
      const { name: _name, ...rest } = item as { name: string }
      return `${JSON.stringify(rest).slice(0, -1)},"name":${rawName}}`
    }
    const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

    for (const kind of KINDS) {
      const count = async () => (await call(stack(), 'GET', `${kind.path}?limit=1000`, { key: member.key })).body[kind.listKey].length

      it(`${kind.name}: a body nested 100,000 levels deep (200 KB) is a 400 on create, batch and PATCH, and the API keeps answering`, async () => {
        const before = await count()
        const deep = withName(kind.item, nestedArrays(100_000))
        const error = { error: 'request body nests deeper than 64 levels' }
        const created = await send('POST', kind.path, deep)
        expect([created.status, created.body]).toEqual([400, error])
        const batch = await send('POST', `${kind.path}/batch`, kind.batch([JSON.stringify(kind.item), deep]))
        expect([batch.status, batch.body]).toEqual([400, error])
        const record = (await send('POST', kind.path, JSON.stringify(kind.item))).body.created[0]
        const patched = await send('PATCH', `${kind.path}/${record[kind.idField]}`, `{"name":${nestedArrays(100_000)}}`)
        expect([patched.status, patched.body]).toEqual([400, error])
        expect(await count()).toBe(before + 1)
        expect((await call(stack(), 'GET', `${kind.path}/${record[kind.idField]}`, { key: member.key })).body).toEqual(record)
      })

      it(`${kind.name}: a style nested 60 levels deep is kept as sent`, async () => {
        let style: unknown = 'deep'
        for (let level = 0; level < 60; level++) style = { v: style }
        const created = await send('POST', kind.path, JSON.stringify({ ...kind.item, style }))
        expect(created.status).toBe(201)
        expect((await call(stack(), 'GET', `${kind.path}/${created.body.created[0][kind.idField]}`, { key: member.key })).body.style).toEqual(style)
      })

      const SURROGATE = 'holds a lone UTF-16 surrogate (a \\uD800-\\uDFFF escape without its pair): text must be valid Unicode'
      const NUL = 'holds U+0000 (NUL), which no field may contain'
      // Text a store cannot keep is an item's own failure: a batch names the item (spec §4.4, §7)
      // and the message names the field, as for any other field rule.
      for (const [what, field, raw, error] of [
        ['a lone surrogate in a name', 'name', '"x\\ud800"', `name ${SURROGATE}`],
        ['a lone low surrogate in a style key', 'style', '{"\\udfff":1}', `style has a member name that ${SURROGATE}`],
        ['U+0000 in a name', 'name', '"a\\u0000b"', `name ${NUL}`],
        ['U+0000 in a style value', 'style', '{"k":["x","\\u0000"]}', `style.k[1] ${NUL}`],
      ]) {
        it(`${kind.name}: ${what} is a 400 naming the field on create, batch item and PATCH, storing nothing`, async () => {
          const before = await count()
          const body = field === 'name' ? withName(kind.item, raw!) : `{"style":${raw},${JSON.stringify(kind.item).slice(1)}`
          const created = await send('POST', kind.path, body)
          expect([created.status, created.body]).toEqual([400, { error }])
          const batch = await send('POST', `${kind.path}/batch`, kind.batch([JSON.stringify(kind.item), body, `{"name":"N"}`]))
          const missingUrl = `${kind.name === 'static' ? 'url' : 'destination_url'} is required`
          expect([batch.status, batch.body]).toEqual([400, { errors: [{ index: 1, error }, { index: 2, error: missingUrl }] }])
          expect(await count()).toBe(before)
          const record = (await send('POST', kind.path, JSON.stringify(kind.item))).body.created[0]
          const patched = await send('PATCH', `${kind.path}/${record[kind.idField]}`, `{"${field}":${raw}}`)
          expect([patched.status, patched.body]).toEqual([400, { error }])
          expect((await call(stack(), 'GET', `${kind.path}/${record[kind.idField]}`, { key: member.key })).body).toEqual(record)
        })
      }

      // A number past a double is lost in the JSON read itself (Infinity, written as null), before
      // any service sees it: the whole body is refused, naming the place of the number.
      it(`${kind.name}: a number past a double in a style is a 400 naming its place on create, batch and PATCH, storing nothing`, async () => {
        const before = await count()
        const body = `{"style":{"k":[1,-1e400]},${JSON.stringify(kind.item).slice(1)}`
        const tooLarge = 'holds a number too large for a double (such as 1e400): it would be stored as null'
        const created = await send('POST', kind.path, body)
        expect([created.status, created.body]).toEqual([400, { error: `style.k[1] ${tooLarge}` }])
        const batch = await send('POST', `${kind.path}/batch`, kind.batch([JSON.stringify(kind.item), body]))
        const itemPlace = kind.name === 'static' ? 'qrcodes[1]' : '[1]'
        expect([batch.status, batch.body]).toEqual([400, { error: `${itemPlace}.style.k[1] ${tooLarge}` }])
        expect(await count()).toBe(before)
        const record = (await send('POST', kind.path, JSON.stringify(kind.item))).body.created[0]
        const patched = await send('PATCH', `${kind.path}/${record[kind.idField]}`, '{"style":{"k":[1,-1e400]}}')
        expect([patched.status, patched.body]).toEqual([400, { error: `style.k[1] ${tooLarge}` }])
        expect((await call(stack(), 'GET', `${kind.path}/${record[kind.idField]}`, { key: member.key })).body).toEqual(record)
      })

      it(`${kind.name}: a name with an emoji (a surrogate pair, escaped or not) is kept as sent`, async () => {
        const created = await send('POST', kind.path, withName(kind.item, '"a\\ud83d\\ude00b 😀"'))
        expect([created.status, created.body.created?.[0]?.name]).toEqual([201, 'a😀b 😀'])
      })
    }
  })

  // docs/decisions.md §3: a name is text for people; control characters would act where it is
  // written (a CSV opened in a terminal, a log line), so they are refused, once the name is trimmed.
  describe('control characters in names', () => {
    let member: Member
    const send = (method: string, path: string, body: unknown) =>
      call(stack(), method, path, { key: member.key, raw: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    beforeAll(async () => {
      member = await freshMember(stack())
    })
    const refusal = (code: string, at: number) =>
      `name must hold no control characters (U+0000 to U+001F, U+007F to U+009F: tab, line break, ESC, ...); it has U+${code} at character ${at}`

    for (const kind of KINDS) {
      const count = async () => (await call(stack(), 'GET', `${kind.path}?limit=1000`, { key: member.key })).body[kind.listKey].length
      for (const [what, name, code, at] of [
        ['a tab inside', 'Menu\tCard', '0009', 5],
        ['a line break inside', 'Menu\nCard', '000A', 5],
        ['ESC (a terminal colour)', '😀 \u001b[31mred', '001B', 3],
        ['DEL', 'Menu\u007f', '007F', 5],
        ['C1 CSI', 'Menu \u009b31m', '009B', 6],
      ] as const) {
        it(`${kind.name}: a name with ${what} is a 400 naming the field and the character on create, batch item and PATCH, storing nothing`, async () => {
          const bad = { ...kind.item, name }
          const before = await count()
          const created = await send('POST', kind.path, bad)
          expect([created.status, created.body]).toEqual([400, { error: refusal(code, at) }])
          const batch = await send('POST', `${kind.path}/batch`, JSON.parse(kind.batch([JSON.stringify(kind.item), JSON.stringify(bad)])))
          expect([batch.status, batch.body]).toEqual([400, { errors: [{ index: 1, error: refusal(code, at) }] }])
          expect(await count()).toBe(before)
          const record = (await send('POST', kind.path, kind.item)).body.created[0]
          const patched = await send('PATCH', `${kind.path}/${record[kind.idField]}`, { name: bad.name })
          expect([patched.status, patched.body]).toEqual([400, { error: refusal(code, at) }])
          expect((await call(stack(), 'GET', `${kind.path}/${record[kind.idField]}`, { key: member.key })).body).toEqual(record)
        })
      }

      it(`${kind.name}: a name keeps bidirectional and zero-width characters, and loses line breaks and tabs around it to trimming`, async () => {
        const created = await send('POST', kind.path, { ...kind.item, name: '\t\u202eabc \u{1F469}\u200d\u{1F4BB}\r\n' })
        expect([created.status, created.body.created?.[0]?.name]).toEqual([201, '\u202eabc \u{1F469}\u200d\u{1F4BB}'])
      })
    }
  })
}
