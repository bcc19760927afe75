import { AppError, type Deleted, libraryOf, type Principal, type Receipt, type Status } from '@lr/proto'
import { etagOf, ifMatchHolds } from '@lr/platform/etag'
import type { RecordKind } from './kind'
import type { LibraryStore, RecordBase, Versioned } from './ports'
import { afterWrite } from './events'
import { checkReviewer, checkStatusChange, reviewDecision, reviewedChanges } from './review'

/** Reads and compare-and-set writes of one PATCH or DELETE before it gives up (another writer kept winning). */
const WRITE_ATTEMPTS = 10

export const STALE_VERSION = 'If-Match does not name the current version of this record (its ETag); GET it again'

/** The fields of `patch` whose value differs from `current`'s (style compared as its JSON; an empty list is an absent one). */
function changedFields<R extends RecordBase, P extends object>(patch: P, current: R): Partial<P> {
  const stored = current as unknown as Record<string, unknown>
  const storedOf = (field: string, value: unknown) => stored[field] ?? (Array.isArray(value) ? [] : null)
  return Object.fromEntries(
    // A field a record does not have equals a PATCH's null (which clears it), and an empty list.
    Object.entries(patch).filter(([field, value]) => value !== undefined && JSON.stringify(value) !== JSON.stringify(storedOf(field, value))),
  ) as Partial<P>
}

/**
 * PATCH and DELETE (docs/decisions.md §4, "Versions"). Both write with a compare-and-set on the
 * version read (its `rev`), so an If-Match check and the no-op check hold at the moment of the
 * write: a record that changed meanwhile is read again (and then fails If-Match with 412).
 */
export function createWrites<R extends RecordBase, P extends { status?: Status }, W, L extends string>(
  kind: RecordKind<R, W, L>,
  store: LibraryStore<R, P>,
  now: () => number,
  found: (principal: Principal, id: string) => Promise<Versioned<R>>,
) {
  const checkVersion = (current: R, ifMatch: string | undefined) => {
    if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etagOf(kind.present(current)))) throw new AppError('precondition_failed', STALE_VERSION)
  }
  const contended = () => new AppError('unavailable', `the ${kind.noun} kept changing while this request tried to write it; retry`)

  return {
    /** A PATCH that changes nothing writes nothing: updated_at, the change position and the change event stay. */
    async update(principal: Principal, id: string, patch: P, ifMatch?: string): Promise<W> {
      for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
        const { record: current, rev } = await found(principal, id)
        checkVersion(current, ifMatch)
        if (patch.status !== undefined) checkStatusChange(principal, current.status, patch.status)
        const changes = reviewedChanges(principal, kind.reviewed, current as never, patch as never, changedFields(patch, current), now())
        if (Object.keys(changes).length === 0) return kind.present(current)
        const updated = await store.update(libraryOf(principal), id, changes as P, now(), rev)
        if (updated) {
          await afterWrite(kind, 'record.updated', libraryOf(principal), [updated])
          return kind.present(updated)
        }
      }
      throw contended()
    },

    /**
     * A team admin's decision on the record's pending change (review.ts); a compare-and-set like
     * update. The record is found first: a code the key cannot reach is 404 for every key, as on
     * every route, before a personal key's 409 or a writer's 403. With `receiptFor` (an
     * Idempotency-Key's), the answer is stored with the change (LibraryStore.update).
     */
    async review(principal: Principal, id: string, decision: 'approve' | 'reject', ifMatch?: string, receiptFor?: (answer: W) => Receipt): Promise<W> {
      for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
        const { record: current, rev } = await found(principal, id)
        checkReviewer(principal)
        checkVersion(current, ifMatch)
        const changes = reviewDecision(kind.reviewed ?? {}, current as never, decision)
        const updated = await store.update(libraryOf(principal), id, changes as P, now(), rev, receiptFor && ((record) => receiptFor(kind.present(record))))
        if (updated) {
          await afterWrite(kind, 'record.updated', libraryOf(principal), [updated])
          return kind.present(updated)
        }
      }
      throw contended()
    },

    /** Without If-Match a delete needs no read; with it, it deletes only the version named. */
    async delete(principal: Principal, id: string, ifMatch?: string): Promise<Deleted> {
      for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
        const current = ifMatch === undefined ? undefined : await found(principal, id)
        if (current) checkVersion(current.record, ifMatch)
        const deleted = await store.delete(libraryOf(principal), id, now(), current?.rev)
        if (deleted) {
          await afterWrite(kind, 'record.deleted', libraryOf(principal), [deleted])
          return { deleted: id }
        }
        if (!current) await found(principal, id) // gone: the 404; else deleted by another since found
      }
      throw contended()
    },
  }
}
