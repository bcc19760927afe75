import { createLibraryService, type LibraryDeps, notFoundIn } from '@lr/library-records'
import { type CodesPage, type CodeStatus, isIssuableCode, libraryOf, type Principal, type ResolveReply } from '@lr/proto'
import { decodeCursor, nextCursor } from '@lr/platform/cursor'
import { randomCode } from './codes'
import { dynamicKind, type DynamicKindDeps } from './kind'
import type { DynamicPatch, DynamicStore, StoredDynamic } from './ports'

/** Codes per page of `codes` (analytics' directory): a page of codes (at most 32 characters each) stays far below any BUS_MAX_PAYLOAD_BYTES. */
export const CODES_PAGE_SIZE = 5000

export interface DynamicDeps extends LibraryDeps<StoredDynamic, DynamicPatch> {
  store: DynamicStore
  /** SHORT_BASE_URL, without a trailing slash: short_url = shortBaseUrl/code. */
  shortBaseUrl: string
  /** Tells every resolver that a code was created, changed or deleted; awaited before answering. */
  announce?: DynamicKindDeps['announce']
  /** Draws one candidate code; default: CODE_LENGTH random characters of [0-9A-Za-z]. */
  newCode?: () => string
  /** Codes per page of `codes`; default CODES_PAGE_SIZE. */
  codesPageSize?: number
  /**
   * Counted scans of a code over all time (analytics' ScanCount), asked when the resolver looks up
   * a capped code: its count starts there. Without it a capped code resolves with `scans: 0`.
   */
  countScans?: (code: string) => Promise<number>
}

export type DynamicService = ReturnType<typeof createDynamicService>

/**
 * The domain operations on dynamic QR codes: the shared lifecycle (a delete is soft: the code
 * stops resolving with 410 and is never issued again), plus the resolver's lookup and analytics'
 * directory. All but `resolve` are scoped to the principal's library.
 */
export function createDynamicService(deps: DynamicDeps) {
  const { store, now, shortBaseUrl, announce, newCode = randomCode, exportPageSize, maxReplyBytes, cursors, claims, codesPageSize = CODES_PAGE_SIZE, countScans, exportWorker, countWorkerChunks } = deps
  const kind = dynamicKind({ shortBaseUrl, newCode, announce })
  return {
    ...createLibraryService(kind, { store, now, exportPageSize, maxReplyBytes, cursors, claims, events: deps.events, exportWorker, countWorkerChunks }),

    /** The resolver's lookup, in any library; null for a code never issued. A capped code's carries its counted scans. */
    async resolve(code: string): Promise<ResolveReply> {
      const entry = isIssuableCode(code) ? await store.resolve(code) : null
      // A capped code's count comes along (README "Expiring and capped codes"); unavailable analytics fails the lookup.
      if (entry && entry.max_scans !== undefined && !entry.deleted) entry.scans = countScans ? await countScans(code) : 0
      return entry
    },

    /** Analytics' directory: one page of the library's live codes, oldest first; `limit` only lowers the page size. */
    async codes(principal: Principal, cursor: string | null, limit = codesPageSize): Promise<CodesPage> {
      const after = cursor === null ? undefined : decodeCursor(cursor)
      const page = await store.liveCodes(libraryOf(principal), { after, limit: Math.min(limit, codesPageSize) })
      return { codes: page.items, next_cursor: nextCursor(page) }
    },

    /** The webhooks worker: the library of a code (soft-deleted included), for its scan events; null when never issued. */
    async libraryOf(code: string): Promise<string | null> {
      return isIssuableCode(code) ? store.libraryOfCode(code) : null
    },

    /** Analytics' directory: a code of the library, soft-deleted included; 404 otherwise. */
    async find(principal: Principal, code: string): Promise<CodeStatus> {
      const found = isIssuableCode(code) ? await store.findCode(libraryOf(principal), code) : null
      if (!found) throw notFoundIn(kind.noun, code)
      return found
    },
  }
}
