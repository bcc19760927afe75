import type { CodesPage, Page, Principal } from '@lr/proto'
import type { CodeBreakdown, CodeSummary } from '@lr/proto'
import type { DayRange } from './days'

/** The analytics store's name: its SQLite file under DATA_DIR (analytics.sqlite) and its metrics label. */
export const ANALYTICS_STORE = 'analytics'

/** A scan as analytics keeps it: the event, enriched; `scanned_at` in epoch milliseconds. No address. */
export interface StoredScan {
  scan_id: string
  code: string
  scanned_at: number
  country: string
  device: string
  os: string
  browser: string
  visitor_id: string
}

/** A breakdown without its code and fallback count: what the store computes from its aggregates. */
export type Breakdown = Omit<CodeBreakdown, 'code' | 'fallback_scans'>

/** A scan sent to an expired or capped code's fallback_url (ScanEvent outcome `fallback`): counted apart, by day. */
export interface FallbackScan {
  scan_id: string
  code: string
  scanned_at: number
}

/**
 * Raw scans plus aggregates kept as scans arrive, per code: totals and distinct visitors over
 * all time, and per UTC day scans, distinct visitors and counts by country, device, OS and
 * browser. Reads of the whole history are O(1) in the number of scans; a partial range reads
 * per-day rows (and, for its distinct visitors, the visitors of those days).
 * Adapters: createSqliteAnalyticsStore (bun:sqlite), createMongoAnalyticsStore (mongoose).
 */
export interface AnalyticsStore {
  /**
   * Stores the scans and updates every aggregate in one transaction (Mongo without a replica
   * set: in order, see the adapter). Idempotent on scan_id: a scan already stored, or repeated
   * in the call, changes nothing. Resolves with how many scans were new; rejects with the
   * driver's error, and then none of the call is applied (SQLite; Mongo with transactions).
   * `writing` (ApplyScans): Mongo without transactions asks it before each write, and rejects
   * once it is false (the rest is the new lease holder's).
   */
  applyScans(scans: StoredScan[], writing?: () => boolean): Promise<number>

  /** Stores fallback scans, idempotent on scan_id like applyScans; how many were new. Never part of any other read. */
  applyFallbacks(scans: FallbackScan[]): Promise<number>

  /** Fallback scans of the code over the range (UTC days, as the other reads). */
  fallbackCount(code: string, range: DayRange): Promise<number>

  /** Totals of each code over the range, in the order given; a code without scans has zeros. */
  summary(codes: string[], range: DayRange): Promise<CodeSummary[]>

  /** The breakdown of one code over the range (docs/decisions.md §6 order); zeros and empty lists when it has no scans. */
  breakdown(code: string, range: DayRange): Promise<Breakdown>

  /**
   * A page of the code's scans within the range, ordered by (scanned_at, scan_id). `after` is a
   * page's `next` (the position of its last scan); a position this store could not have issued
   * is AppError('bad_request'). `next` is null on the last page.
   */
  exportPage(code: string, options: { range: DayRange; after?: string; limit: number }): Promise<Page<StoredScan>>

  /** True while the store answers (readiness); never rejects. */
  ping(): Promise<boolean>
}

/**
 * Which codes belong to a library: the dynamic service's knowledge, asked over the bus
 * (createBusCodeDirectory). Rejections are the transport's AppError (unavailable, timeout).
 */
export interface CodeDirectory {
  /** A page of the live (not soft-deleted) codes of the principal's library, oldest first: at most `limit`, after `cursor` (null: the first). */
  liveCodes(principal: Principal, page: { cursor: string | null; limit: number }): Promise<CodesPage>
  /** The code when it is in the principal's library, soft-deleted or not; null otherwise. */
  find(principal: Principal, code: string): Promise<{ code: string; deleted: boolean } | null>
}
