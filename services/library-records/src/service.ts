import { AppError, DEFAULT_MAX_PAYLOAD, type ExportChunk, type KeyClaims, libraryOf, type ListQuery, type Principal, REPLY_ENVELOPE_BYTES, type Status } from '@lr/proto'
import { decodeCursor, nextCursor } from '@lr/platform/cursor'
import { CHUNK_MAX_BYTES, csvChunk } from '@lr/platform/csv'
import { batchItems, checkBatch } from './batch'
import { batchEnvelopeOf } from './batch-envelope'
import { compileBodyCheck } from './body-check'
import { recordRules } from './field-rules'
import { orBadRequest } from './fields'
import { createInsert } from './insert'
import type { RecordKind } from './kind'
import { parseListQuery } from './list-query'
import type { LibraryStore, RecordBase } from './ports'
import { checkStatusChange } from './review'

/** The not-found answer of every record route: a record of another library is one that does not exist. */
export const notFoundIn = (noun: string, id: string) => new AppError('not_found', `no ${noun} ${JSON.stringify(id.slice(0, 100))} in this library`)

/** Rows per export chunk: large enough to be fast, small enough to keep memory flat. */
export const EXPORT_PAGE_SIZE = 2000

export interface LibraryDeps<R extends RecordBase, P> {
  store: LibraryStore<R, P>
  /** Current time in epoch seconds. */
  now: () => number
  /** Rows per export chunk; default EXPORT_PAGE_SIZE. */
  exportPageSize?: number
  /**
   * Bytes a list page or export chunk may take: the bus's maxPayload less REPLY_ENVELOPE_BYTES.
   * A page over it comes back shorter, with a next_cursor (docs/decisions.md §4).
   */
  maxReplyBytes?: number
  /**
   * The Idempotency-Key register shared with the other services that create (openKeyClaims),
   * when their receipts are kept apart (SQLite); absent when they share one collection (Mongo).
   */
  claims?: KeyClaims
}

/** A bound on one record's JSON (2048-character URL, 200-character name, 8 KiB style, the rest). */
const RECORD_MAX_BYTES = 16 * 1024

export type LibraryService<R extends RecordBase, P extends { status?: Status }, W extends object, L extends string> = ReturnType<typeof createLibraryService<R, P, W, L>>

/**
 * The lifecycle every library record shares: create, batch, list, get, PATCH with the review
 * rule, delete and CSV export, each scoped to the principal's library; what differs is `kind`.
 */
export function createLibraryService<R extends RecordBase, P extends { status?: Status }, W extends object, L extends string>(
  kind: RecordKind<R, W, L>,
  deps: LibraryDeps<R, P>,
) {
  const { store, now, exportPageSize = EXPORT_PAGE_SIZE, maxReplyBytes = DEFAULT_MAX_PAYLOAD - REPLY_ENVELOPE_BYTES, claims } = deps
  const rules = recordRules(kind.urlField)
  const checkCreate = compileBodyCheck(kind.bodies.create, rules)
  const checkPatch = compileBodyCheck(kind.bodies.patch, rules)
  const envelope = batchEnvelopeOf(kind.bodies.batch)
  const insert = createInsert(kind, store, now, claims)
  const isPossibleId = kind.isPossibleId ?? (() => true)
  const notFound = (id: string) => notFoundIn(kind.noun, id)

  async function found(principal: Principal, id: string): Promise<R> {
    // An id that could never have been issued is not looked up.
    const record = isPossibleId(id) ? await store.get(libraryOf(principal), id) : null
    if (!record) throw notFound(id)
    return record
  }

  return {
    async create(principal: Principal, body: unknown, idempotencyKey?: string) {
      return insert(principal, `${kind.name}.create`, body, idempotencyKey, () => [orBadRequest(() => checkCreate(body))])
    },

    /** All or nothing: every failing item is named and nothing is stored. */
    async batch(principal: Principal, body: unknown, idempotencyKey?: string) {
      const items = () => checkBatch(batchItems(body, envelope), checkCreate)
      return insert(principal, `${kind.name}.batch`, body, idempotencyKey, items)
    },

    /** One page; cut shorter (with a next_cursor) when `limit` records would not fit one reply. */
    async list(principal: Principal, query: ListQuery) {
      const options = parseListQuery(query, { status: kind.statusFilter })
      for (let limit = options.limit; ; ) {
        const page = await store.list(libraryOf(principal), { ...options, limit })
        const items = page.items.map(kind.present)
        // Measured only when the page could be too large: most pages cannot.
        const bytes = items.length * RECORD_MAX_BYTES <= maxReplyBytes ? 0 : Buffer.byteLength(JSON.stringify(items))
        if (bytes <= maxReplyBytes || limit === 1)
          return { [kind.listKey]: items, next_cursor: nextCursor(page) } as Record<L, W[]> & { next_cursor: string | null }
        limit = Math.max(1, Math.min(limit - 1, Math.floor((limit * maxReplyBytes) / bytes)))
      }
    },

    async get(principal: Principal, id: string): Promise<W> {
      return kind.present(await found(principal, id))
    },

    async update(principal: Principal, id: string, body: unknown): Promise<W> {
      const patch = orBadRequest(() => checkPatch(body)) as P
      const current = await found(principal, id)
      if (patch.status !== undefined) {
        checkStatusChange(principal, current.status, patch.status)
        // An unchanged status is not written, so a writer's no-op `active` cannot race a move to draft.
        if (patch.status === current.status) delete patch.status
      }
      const updated = await store.update(libraryOf(principal), id, patch, now())
      if (!updated) throw notFound(id)
      await kind.changed?.([updated], false)
      return kind.present(updated)
    },

    async delete(principal: Principal, id: string): Promise<{ deleted: string }> {
      const deleted = isPossibleId(id) ? await store.delete(libraryOf(principal), id, now()) : null
      if (!deleted) throw notFound(id)
      await kind.changed?.([deleted], true)
      return { deleted: id }
    },

    /** One chunk of the CSV export; `cursor` null starts it (and only that chunk has the header). */
    async exportPage(principal: Principal, cursor: string | null): Promise<ExportChunk> {
      const after = cursor === null ? undefined : decodeCursor(cursor)
      const read = async (limit: number) => {
        const page = await store.list(libraryOf(principal), { limit, after })
        return { items: page.items.map(kind.present), next: page.next }
      }
      return csvChunk(kind.exportColumns, read, exportPageSize, cursor === null, Math.min(CHUNK_MAX_BYTES, Math.floor(maxReplyBytes / 2)))
    },

    /** The compiled body checks; each one's `schema` is the @lr/proto object the gateway documents. */
    checks: { create: checkCreate, patch: checkPatch, batch: envelope },
  }
}
