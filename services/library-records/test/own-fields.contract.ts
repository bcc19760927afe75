import { describe, expect, it } from 'bun:test'
import { AppError, type Principal } from '@lr/proto'

/** A kind's service as this contract drives it, with what differs between kinds. */
export interface OwnFieldsKind {
  /** A fresh service of the kind (its record types differ, so it is driven untyped). */
  service: () => any
  principal: Principal
  valid: object
  listKey: string
  idField: string
  batchOf: (items: object[]) => unknown
}

const failure = (work: Promise<unknown>) =>
  work.then(
    () => { throw new Error('expected a failure') },
    (error: AppError) => ({ code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) }),
  )

/** `body` with `field` as an own property first, as JSON.parse gives it (even `__proto__`). */
const withField = (field: string, body: object) => JSON.parse(`{${JSON.stringify(field)}:1,${JSON.stringify(body).slice(1)}`)

/** Names Object.prototype carries are unknown fields like any other, on both kinds: never a 500, never ignored. */
export function ownFieldsContract(kind: OwnFieldsKind) {
  describe('body fields named like Object.prototype members', () => {
    const badRequest = (message: string) => ({ code: 'bad_request' as const, message })
    for (const field of ['__proto__', '__defineGetter__', 'constructor', 'toString', 'hasOwnProperty']) {
      const own = (body: object) => withField(field, body)

      it(`rejects ${field} with 400 naming it on create, and stores nothing`, async () => {
        const service = kind.service()
        expect(await failure(service.create(kind.principal, own(kind.valid)))).toEqual(badRequest(`unknown field "${field}"`))
        expect((await service.list(kind.principal, {}))[kind.listKey]).toEqual([])
      })

      it(`names the batch item that carries ${field}`, async () => {
        const service = kind.service()
        expect(await failure(service.batch(kind.principal, kind.batchOf([kind.valid, own(kind.valid)]))))
          .toEqual({ code: 'batch_invalid', message: 'one or more items are invalid', details: { items: [{ index: 1, error: `unknown field "${field}"` }] } })
      })

      it(`rejects ${field} with 400 naming it on PATCH, and changes nothing`, async () => {
        const service = kind.service()
        const [record] = (await service.create(kind.principal, kind.valid)).created
        const id = record[kind.idField]
        expect(await failure(service.update(kind.principal, id, own({ name: 'New' })))).toEqual(badRequest(`unknown field "${field}"`))
        expect(await service.get(kind.principal, id)).toEqual(record)
      })
    }
  })
}
