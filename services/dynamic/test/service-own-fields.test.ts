import { describe, expect, it } from 'bun:test'
import { badRequest, failure, personal, setup } from './fixtures'

const valid = { destination_url: 'https://example.com/menu', name: 'Menu' }
/** `body` with `field` as an own property first, as JSON.parse gives it (even `__proto__`). */
const withField = (field: string, body: object) => JSON.parse(`{${JSON.stringify(field)}:1,${JSON.stringify(body).slice(1)}`)

// Names Object.prototype carries must be unknown fields like any other: never a 500, never ignored.
describe('body fields named like Object.prototype members', () => {
  for (const field of ['__proto__', '__defineGetter__', 'constructor', 'toString', 'hasOwnProperty']) {
    const own = (body: object) => withField(field, body)

    it(`rejects ${field} with 400 naming it on create, and stores nothing`, async () => {
      const { service } = setup()
      expect(await failure(service.create(personal, own(valid)))).toEqual(badRequest(`unknown field "${field}"`))
      expect((await service.list(personal, {})).dynqrcodes).toEqual([])
    })

    it(`names the batch item that carries ${field}`, async () => {
      const { service } = setup()
      expect(await failure(service.batch(personal, [valid, own(valid)])))
        .toEqual({ code: 'batch_invalid', message: 'one or more items are invalid', details: { items: [{ index: 1, error: `unknown field "${field}"` }] } })
    })

    it(`rejects ${field} with 400 naming it on PATCH, and changes nothing`, async () => {
      const { service } = setup()
      const [record] = (await service.create(personal, valid)).created
      expect(await failure(service.update(personal, record!.code, own({ name: 'New' })))).toEqual(badRequest(`unknown field "${field}"`))
      expect(await service.get(personal, record!.code)).toEqual(record!)
    })
  }
})
