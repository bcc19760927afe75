import { randomBytes } from 'node:crypto'
import { AppError, DEFAULT_MAX_PAYLOAD, type Deleted, type ExportChunk, type KeyClaims, libraryOf, type ListQuery, type Page, type Principal, REPLY_ENVELOPE_BYTES, type RecordEventSink, ReviewBody, type Status, type Tombstone } from '@lr/proto'
import { idempotent } from '@lr/platform/idempotency'
import { createCursors, type Cursors, decodeExportCursor, exportCursorOf, seqOf } from '@lr/platform/cursor'
import { bulkOutput } from '@lr/platform/bulk-gc'
import { exportChunks } from '@lr/platform/metrics'
import { CHUNK_MAX_BYTES, csvChunkOf } from '@lr/platform/csv'
import { keptListText, UNCHANGED_TEXT } from '@lr/platform/kept-list'
import { batchItems, checkBatch } from './batch'
import { batchEnvelopeOf } from './batch-envelope'
import { compileBodyCheck } from './body-check'
import { recordRules } from './field-rules'
import { orBadRequest } from './fields'
import { createInsert } from './insert'
import { createListCache } from './list-cache'
import type { RecordKind } from './kind'
import { parseListQuery } from './list-query'
import type { Exported, LibraryStore, RecordBase, Versioned } from './ports'
import { createWrites } from './write'
import { withRecordEvents } from './events'
import type { ExportWorker } from './export-in-worker'

/** The not-found answer of every record route: a record of another library is one that does not exist. */
export const notFoundIn = (noun: string, id: string) => new AppError('not_found', `no ${noun} ${JSON.stringify(id.slice(0, 100))} in this library`)

/**
 * Rows per export chunk: large enough to be fast, small enough to keep memory flat. 1000 rows
 * (about 220 KB of CSV) measured faster than 2000 with the same peak RSS (bench/ANALYSIS.md,
 * "Sixth session").
 */
export const EXPORT_PAGE_SIZE = 1000

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
  /** Seals the cursors of lists (CURSOR_SECRET); default: a random key of this service. */
  cursors?: Cursors
  /**
   * The Idempotency-Key register shared with the other services that create (openKeyClaims),
   * when their receipts are kept apart (SQLite); absent when they share one collection (Mongo).
   */
  claims?: KeyClaims
  /** Where record events go (webhooks, docs/decisions.md "Webhooks"); none: no events. */
  events?: RecordEventSink
  /** Makes export chunks off this thread (exportWorkerOf: a SQLite store on a file); none: this thread makes them. */
  exportWorker?: ExportWorker
  /**
   * Whether this thread's bulk collection (bulk-gc.ts) counts the chunks the export Worker made:
   * where this process turns them into bus replies (TRANSPORT=nats: without it a 1M-row export
   * took the dynamic process to 123 MiB against 109 MiB for 100k rows; with it 113 / 110). In one
   * process the gateway, streaming them on this same thread, counts them already, and counting
   * twice cost a tenth of the export's speed. Default true.
   */
  countWorkerChunks?: boolean
}

const isTombstone = (item: object): item is Tombstone => 'deleted_at' in item

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
  kind = withRecordEvents(kind, deps.events) // adds `emit` when there is a sink (webhooks)
  const { store, now, exportPageSize = EXPORT_PAGE_SIZE, maxReplyBytes = DEFAULT_MAX_PAYLOAD - REPLY_ENVELOPE_BYTES, claims, exportWorker, countWorkerChunks = true } = deps
  const cursors = deps.cursors ?? createCursors(randomBytes(32).toString('hex'))
  const rules = { ...recordRules(kind.urlField), ...kind.fieldRules }
  const checkCreate = compileBodyCheck(kind.bodies.create, rules)
  const checkPatch = compileBodyCheck(kind.bodies.patch, rules)
  const checkReview = compileBodyCheck(ReviewBody)
  const envelope = batchEnvelopeOf(kind.bodies.batch)
  const insert = createInsert(kind, store, now, claims)
  const isPossibleId = kind.isPossibleId ?? (() => true)
  const notFound = (id: string) => notFoundIn(kind.noun, id)

  async function found(principal: Principal, id: string): Promise<Versioned<R>> {
    // An id that could never have been issued is not looked up.
    const read = isPossibleId(id) ? await store.get(libraryOf(principal), id) : null
    if (!read) throw notFound(id)
    return read
  }
  const writes = createWrites(kind, store, now, found)
  // What a cursor is sealed under: it opens only in the same library, kind and listing.
  const scopeOf = (principal: Principal, listing: string) => `${libraryOf(principal)}\n${kind.name}\n${listing}`
  const listCache = createListCache(kind.name)

  /**
   * One page; cut shorter (with a next_cursor) when `limit` records would not fit one reply.
   * With updated_since or include_deleted, the list of changes (tombstones included on request).
   */
  async function list(principal: Principal, query: ListQuery) {
    const { options, changes, cursor, scope } = parseListQuery(query, { status: kind.statusFilter })
    const sealedUnder = scopeOf(principal, scope)
    if (cursor !== undefined) options.after = cursors.open(sealedUnder, cursor)
    for (let limit = options.limit; ; ) {
      const read = { ...options, limit }
      const page = changes ? await store.changes(libraryOf(principal), read) : await store.list(libraryOf(principal), read)
      const items = page.items.map((item) => (isTombstone(item) ? item : kind.present(item)))
      // Measured only when the page could be too large: most pages cannot.
      const bytes = items.length * RECORD_MAX_BYTES <= maxReplyBytes ? 0 : Buffer.byteLength(JSON.stringify(items))
      if (bytes <= maxReplyBytes || limit === 1) {
        const next_cursor = page.next === null ? null : cursors.seal(sealedUnder, page.next)
        return { [kind.listKey]: items, next_cursor } as Record<L, (W | Tombstone)[]> & { next_cursor: string | null }
      }
      limit = Math.max(1, Math.min(limit - 1, Math.floor((limit * maxReplyBytes) / bytes)))
    }
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

    list,

    /**
     * `list` as the JSON text of its reply (the bus sends it as it is: JsonText). Where the store
     * has change positions the text is kept and answered again while the library's position
     * stays (list-cache.ts), so a client polling an unchanged page costs one indexed read.
     * With `known` (a gateway's ListRequest, null when it holds nothing) the answer is for a
     * gateway that keeps pages (@lr/platform/kept-list): unchanged when its tag is `known`.
     */
    async listJson(principal: Principal, query: ListQuery, known?: string | null): Promise<string> {
      const library = libraryOf(principal)
      // The position is read before the page: a write landing between the two leaves a kept
      // reply newer than its position, which the next request finds moved (a miss), never older.
      const position = store.changePosition ? await store.changePosition(library) : undefined
      let text: string
      let tag: string | null = null
      if (position === undefined) text = JSON.stringify(await list(principal, query))
      else {
        // Everything else a reply depends on is in the query (its cursor, filters and limit).
        const key = `${library}\n${JSON.stringify(query)}`
        ;({ text, tag } = listCache.get(key, position) ?? listCache.set(key, position, JSON.stringify(await list(principal, query))))
      }
      if (known === undefined) return text
      return tag !== null && tag === known ? UNCHANGED_TEXT : keptListText(tag, text)
    },

    async get(principal: Principal, id: string): Promise<W> {
      return kind.present((await found(principal, id)).record)
    },

    /**
     * Only fields that differ are written (an unchanged status too, so a writer's no-op `active`
     * cannot race a move to draft); `ifMatch`, the client's If-Match, must name the current version.
     */
    async update(principal: Principal, id: string, body: unknown, ifMatch?: string): Promise<W> {
      const patch = orBadRequest(() => checkPatch(body)) as P
      return writes.update(principal, id, patch, ifMatch)
    },

    /**
     * POST .../review (`{"decision": "approve" | "reject"}`): a team admin settles the record's
     * pending change. With an Idempotency-Key, at most once: a retry replays the first answer
     * (it would otherwise find nothing pending, a 409), the receipt stored with the change.
     */
    async review(principal: Principal, id: string, body: unknown, ifMatch?: string, idempotencyKey?: string): Promise<W> {
      const { decision } = orBadRequest(() => checkReview(body))
      if (!isPossibleId(id)) throw notFound(id)
      // Checked before the key is looked at: a refused request leaves no claim (docs/decisions.md §8).
      return idempotent<W>(store, { scope: principal.key_id, key: idempotencyKey, route: `${kind.name}.review`, body: { id, decision }, now: now() }, (receiptFor) =>
        writes.review(principal, id, decision, ifMatch, receiptFor), claims)
    },

    async delete(principal: Principal, id: string, ifMatch?: string): Promise<Deleted> {
      if (!isPossibleId(id)) throw notFound(id)
      return writes.delete(principal, id, ifMatch)
    },

    /** One chunk of the CSV export; `cursor` null starts it (and only that chunk has the header). Live records only. */
    async exportPage(principal: Principal, cursor: string | null): Promise<ExportChunk> {
      // The gateway loops over these cursors itself, never showing one to a client: plain ones (platform/src/cursor.ts).
      const { position: after, rows } = cursor === null ? { position: undefined, rows: undefined } : decodeExportCursor(cursor)
      const library = libraryOf(principal)
      // A store's export form keeps style as JSON text, which csvCell writes as it is: the same
      // cell as the parsed style's JSON. Rows are formatted as read (RecordKind.exportCells).
      const read = (limit: number): Promise<Page<R | Exported<R>>> =>
        store.exportPage ? store.exportPage(library, { limit, after }) : store.list(library, { limit, after })
      const shape = { columns: kind.exportColumns, derived: kind.exportCells, limit: exportPageSize, start: rows, maxBytes: Math.min(CHUNK_MAX_BYTES, Math.floor(maxReplyBytes / 2)) }
      if (exportWorker) {
        // A chunk the Worker could not make is made here (export-in-worker.ts logs why).
        const made = await exportWorker.chunk({ library, after: after === undefined ? 0 : seqOf(after), first: cursor === null, shape }).catch(() => undefined)
        if (made) {
          exportChunks.inc({ kind: kind.name, made: made.ahead ? 'ahead' : 'worker' })
          // This thread holds copies of it too (the Worker's, the reply's): bulk-gc.ts.
          if (countWorkerChunks) bulkOutput(made.csv.length)
          return { csv: made.csv, next_cursor: exportCursorOf(made, exportPageSize) }
        }
      }
      exportChunks.inc({ kind: kind.name, made: 'this_thread' })
      const made = await csvChunkOf(shape, read, cursor === null)
      return { csv: made.csv, next_cursor: exportCursorOf(made, exportPageSize) }
    },

    /** The compiled body checks; each one's `schema` is the @lr/proto object the gateway documents. */
    checks: { create: checkCreate, patch: checkPatch, batch: envelope },
  }
}
