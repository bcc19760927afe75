import type { LibraryStore } from '@lr/library-records'
import type { CodeStatus, DynamicRecord, Page, PendingChange, ResolverEntry } from '@lr/proto'

/** A dynamic record as stored: short_url is derived from SHORT_BASE_URL when answering, never stored. */
export type StoredDynamic = Omit<DynamicRecord, 'short_url' | 'pending_change' | 'expires_at' | 'max_scans' | 'fallback_url'> & {
  pending_change?: PendingChange | null
  /** Null or absent: not set (stores read null for a row without it). */
  expires_at?: number | null
  max_scans?: number | null
  fallback_url?: string | null
}

/**
 * The fields a PATCH may change; absent fields keep their value, null clears expires_at,
 * max_scans or fallback_url.
 */
export type DynamicPatch = Partial<Pick<StoredDynamic, 'destination_url' | 'name' | 'status' | 'style' | 'tags' | 'redirect_rules'>>
  & Pick<StoredDynamic, 'expires_at' | 'max_scans' | 'fallback_url'> & {
  /** null drops the pending change (an approval, a rejection, a withdrawal). */
  pending_change?: PendingChange | null
}

/** The kind's own optional fields, as both stores keep them (absent on rows stored before them). */
export const DYNAMIC_OWN_FIELDS = {
  redirect_rules: 'json', pending_change: 'json', expires_at: 'number', max_scans: 'number', fallback_url: 'string',
} as const

/**
 * Persistence of dynamic QR codes: the shared LibraryStore, id `code`, with soft deletes. A
 * soft-deleted record is hidden from the shared calls (null, as one of another library) but
 * keeps its row for ever, so its code is never issued again (StoreConflict('code') on insert).
 * Adds what the resolver and analytics need. Adapters: createSqliteDynamicStore (bun:sqlite),
 * createMongoDynamicStore (mongoose).
 */
export interface DynamicStore extends LibraryStore<StoredDynamic, DynamicPatch> {
  /**
   * What a scan of `code` needs, in whatever library, soft-deleted included; null when never
   * issued. expires_at, max_scans and fallback_url only when set (never `scans`: analytics' count).
   */
  resolve(code: string): Promise<ResolverEntry | null>

  /**
   * A page of the library's live codes only, oldest first, with the same positions as `list`
   * (analytics' summary lists every live code).
   */
  liveCodes(library: string, options: { after?: string; limit: number }): Promise<Page<string>>

  /** The library of `code`, soft-deleted included; null when never issued (webhooks' scan events). */
  libraryOfCode(code: string): Promise<string | null>

  /** The code when it is in this library, soft-deleted included (analytics keeps its history); null otherwise. */
  findCode(library: string, code: string): Promise<CodeStatus | null>
}
