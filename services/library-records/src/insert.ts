import { AppError, type KeyClaims, libraryOf, type Principal, type Receipt, StoreConflict } from '@lr/proto'
import { idempotent } from '@lr/platform/idempotency'
import { afterWrite } from './events'
import type { RecordKind } from './kind'
import type { LibraryStore, RecordBase } from './ports'
import { ownershipOf } from './review'

/** Inserts tried with fresh ids when the store reports an id as taken. */
export const INSERT_ATTEMPTS = 5

type Created<W> = { created: W[] }

/**
 * How a kind stores new records: fresh ids, drawn again when the store reports one as taken
 * (StoreConflict on the id); with an Idempotency-Key, at most once per key (the answer is replayed),
 * the key claimed in `claims` when given (see idempotent).
 */
export function createInsert<R extends RecordBase, P, W, L extends string>(kind: RecordKind<R, W, L>, store: LibraryStore<R, P>, now: () => number, claims?: KeyClaims) {
  const fieldOrder = Object.keys(kind.bodies.create.properties)

  function build(principal: Principal, id: string, fields: Record<string, unknown>, at: number): R {
    const given = Object.fromEntries(fieldOrder.filter((key) => fields[key] !== undefined).map((key) => [key, fields[key]]))
    return { [kind.idField]: id, ...given, style: fields.style ?? {}, tags: fields.tags ?? [], ...ownershipOf(principal), created_at: at, updated_at: at } as unknown as R
  }

  async function insertFresh(principal: Principal, items: Record<string, unknown>[], at: number, receiptFor?: (r: Created<W>) => Receipt) {
    for (let attempt = 1; ; attempt++) {
      const ids = kind.newIds(items.length)
      const records = items.map((fields, i) => build(principal, ids[i]!, fields, at))
      const answerOf = (stored: R[]): Created<W> => ({ created: stored.map(kind.present) })
      let stored: R[]
      try {
        // The records as stored: a later time than `at` when a change stored before them has one (adapters/change-times.ts).
        stored = await store.insertMany(libraryOf(principal), records, receiptFor && ((stored) => receiptFor(answerOf(stored))))
      } catch (error) {
        if (!(error instanceof StoreConflict) || error.key !== kind.idField) throw error
        if (attempt >= INSERT_ATTEMPTS) throw new AppError('internal', `could not issue a unique ${kind.idField}`)
        continue
      }
      await afterWrite(kind, 'record.created', libraryOf(principal), stored)
      return answerOf(stored)
    }
  }

  return async (principal: Principal, route: string, body: unknown, key: string | undefined, check: () => Record<string, unknown>[]) => {
    const at = now()
    // Checked before the key is looked at: a refused request leaves no claim (docs/decisions.md §8).
    const items = check()
    return idempotent<Created<W>>(store, { scope: principal.key_id, key, route, body, now: at }, (receiptFor) =>
      insertFresh(principal, items, at, receiptFor), claims)
  }
}
