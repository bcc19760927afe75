import { AppError, isIssuableCode, libraryOf, type ListQuery, type Principal } from '@lr/proto'
import { decodeCursor, nextCursor } from '@lr/platform/cursor'
import { orBadRequest, parseListQuery } from '@lr/library-records'
import { batchItems, checkBatch } from '@lr/library-records'
import { csvChunk } from '@lr/platform/csv'
import type { CodesPage, CodeStatus, DynamicRecord, ResolveReply, ResolverEntry } from '@lr/proto'
import { idempotent } from '@lr/platform/idempotency'
import { type Receipt } from '@lr/proto'
import type { ExportChunk } from '@lr/proto'
import { checkStatusChange, ownershipOf } from '@lr/library-records'
import { drawCodes, randomCode } from './codes'
import { checkCreate, checkPatch, EXPORT_COLUMNS, type CreateFields } from './fields'
import { CodeTakenError, type DynamicStore, type StoredDynamic } from './ports'

/** Rows per export chunk: large enough to be fast, small enough to keep memory flat. */
export const EXPORT_PAGE_SIZE = 2000
/** Codes per page of `codes` (analytics' directory): a page stays far below NATS's 1 MB payload limit. */
export const CODES_PAGE_SIZE = 5000
/** Inserts tried with fresh codes when the store reports a code as taken. */
export const INSERT_ATTEMPTS = 5

export interface DynamicDeps {
  store: DynamicStore
  /** Current time in epoch seconds. */
  now: () => number
  /** SHORT_BASE_URL, without a trailing slash: short_url = shortBaseUrl/code. */
  shortBaseUrl: string
  /** Tells every resolver that a code was created, changed or deleted; awaited before answering. */
  announce?: (entry: ResolverEntry) => Promise<void>
  /** Draws one candidate code; default: 8 random characters of [0-9A-Za-z]. */
  newCode?: () => string
  /** Rows per export chunk; default EXPORT_PAGE_SIZE. */
  exportPageSize?: number
  /** Codes per page of `codes`; default CODES_PAGE_SIZE. */
  codesPageSize?: number
}

export type DynamicService = ReturnType<typeof createDynamicService>

const notFound = (code: string) => new AppError('not_found', `no dynamic QR code ${JSON.stringify(code.slice(0, 100))} in this library`)
const entryOf = (r: StoredDynamic, deleted = false): ResolverEntry =>
  ({ code: r.code, destination_url: r.destination_url, status: r.status, deleted })

/** The domain operations on dynamic QR codes; all but `resolve` are scoped to the principal's library. */
export function createDynamicService(deps: DynamicDeps) {
  const { store, now, shortBaseUrl, newCode = randomCode, exportPageSize = EXPORT_PAGE_SIZE, codesPageSize = CODES_PAGE_SIZE } = deps
  const withShortUrl = ({ code, ...rest }: StoredDynamic): DynamicRecord => ({ code, short_url: `${shortBaseUrl}/${code}`, ...rest })

  async function announce(entries: ResolverEntry[]): Promise<void> {
    // The write is done: a lost event only delays the resolvers until their cache refresh.
    await Promise.all(entries.map((entry) => deps.announce?.(entry))).catch((error) =>
      console.error('[dynamic] could not announce a change:', error),
    )
  }

  type Created = { created: DynamicRecord[] }

  /** Stores new codes, drawing fresh ones when one is taken; with an Idempotency-Key, at most once per key. */
  function insert(principal: Principal, route: string, body: unknown, key: string | undefined, check: () => CreateFields[]) {
    const at = now()
    return idempotent<Created>(store, { scope: principal.key_id, key, route, body, now: at }, (receiptFor) =>
      insertFresh(principal, check(), at, receiptFor))
  }

  async function insertFresh(principal: Principal, items: CreateFields[], at: number, receiptFor?: (r: Created) => Receipt): Promise<Created> {
    for (let attempt = 1; ; attempt++) {
      const codes = drawCodes(newCode, items.length)
      const records: StoredDynamic[] = items.map((fields, i) => ({
        code: codes[i]!, destination_url: fields.destination_url, name: fields.name, style: fields.style ?? {},
        ...ownershipOf(principal), created_at: at, updated_at: at,
      }))
      const response = { created: records.map(withShortUrl) }
      try {
        await store.insertMany(libraryOf(principal), records, receiptFor?.(response))
      } catch (error) {
        if (!(error instanceof CodeTakenError)) throw error
        if (attempt >= INSERT_ATTEMPTS) throw new AppError('internal', 'could not issue a unique code')
        continue
      }
      await announce(records.map((r) => entryOf(r)))
      return response
    }
  }

  async function found(principal: Principal, code: string): Promise<StoredDynamic> {
    // A code that could never have been issued is not looked up.
    const record = isIssuableCode(code) ? await store.get(libraryOf(principal), code) : null
    if (!record) throw notFound(code)
    return record
  }

  return {
    async create(principal: Principal, body: unknown, idempotencyKey?: string) {
      return insert(principal, 'dynamic.create', body, idempotencyKey, () => [orBadRequest(() => checkCreate(body))])
    },

    /** A bare array or {"dynqrcodes": [...]}; all or nothing, every failing item is named. */
    async batch(principal: Principal, body: unknown, idempotencyKey?: string) {
      return insert(principal, 'dynamic.batch', body, idempotencyKey, () => checkBatch(batchItems(body, 'dynqrcodes', { bareArray: true }), checkCreate))
    },

    async list(principal: Principal, query: ListQuery) {
      const page = await store.list(libraryOf(principal), parseListQuery(query, { status: true }))
      return { dynqrcodes: page.items.map(withShortUrl), next_cursor: nextCursor(page) }
    },

    async get(principal: Principal, code: string): Promise<DynamicRecord> {
      return withShortUrl(await found(principal, code))
    },

    async update(principal: Principal, code: string, body: unknown): Promise<DynamicRecord> {
      const patch = orBadRequest(() => checkPatch(body))
      const current = await found(principal, code)
      if (patch.status !== undefined) {
        checkStatusChange(principal, current.status, patch.status)
        // An unchanged status is not written, so a writer's no-op `active` cannot race a move to draft.
        if (patch.status === current.status) delete patch.status
      }
      const updated = await store.update(libraryOf(principal), code, patch, now())
      if (!updated) throw notFound(code)
      await announce([entryOf(updated)])
      return withShortUrl(updated)
    },

    /** Soft delete: the code stops resolving (410) and is never issued again. */
    async delete(principal: Principal, code: string): Promise<{ deleted: string }> {
      const deleted = isIssuableCode(code) ? await store.softDelete(libraryOf(principal), code, now()) : null
      if (!deleted) throw notFound(code)
      await announce([entryOf(deleted, true)])
      return { deleted: code }
    },

    /** One chunk of the CSV export; `cursor` null starts it (and only that chunk has the header). */
    async exportPage(principal: Principal, cursor: string | null): Promise<ExportChunk> {
      const after = cursor === null ? undefined : decodeCursor(cursor)
      const read = async (limit: number) => {
        const page = await store.list(libraryOf(principal), { limit, after })
        return { items: page.items.map(withShortUrl), next: page.next }
      }
      return csvChunk(EXPORT_COLUMNS, read, exportPageSize, cursor === null)
    },

    /** The resolver's lookup, in any library; null for a code never issued. */
    async resolve(code: string): Promise<ResolveReply> {
      return isIssuableCode(code) ? store.resolve(code) : null
    },

    /** Analytics' directory: one page of the library's live codes, oldest first. */
    async codes(principal: Principal, cursor: string | null): Promise<CodesPage> {
      const after = cursor === null ? undefined : decodeCursor(cursor)
      const page = await store.liveCodes(libraryOf(principal), { after, limit: codesPageSize })
      return { codes: page.items, next_cursor: nextCursor(page) }
    },

    /** Analytics' directory: a code of the library, soft-deleted included; 404 otherwise. */
    async find(principal: Principal, code: string): Promise<CodeStatus> {
      const found = isIssuableCode(code) ? await store.findCode(libraryOf(principal), code) : null
      if (!found) throw notFound(code)
      return found
    },
  }
}
