import { AppError, isIssuableCode, type Principal } from '@lr/proto'
import { type CodeBreakdown, SCAN_EXPORT_COLUMNS, type ScanCount, type ScanRow, type SummaryPage } from '@lr/proto'
import { csvChunk } from '@lr/platform/csv'
import type { ExportChunk } from '@lr/proto'
import { parseDayRange } from './day-query'
import { type Agent, createAgentCache } from './enrich'
import { createScanIngest } from './ingest'
import { reportIngest } from './ingest-report'
import type { AnalyticsStore, CodeDirectory, StoredScan } from './ports'
import { ALL_TIME } from './days'
import { decodeScanCursor } from './position'

/** Rows per export chunk: large enough to be fast, small enough to keep memory flat. */
export const EXPORT_PAGE_SIZE = 2000

/**
 * Codes per summary page. One reply holding every code of a library was refused by the bus
 * beyond BUS_MAX_PAYLOAD_BYTES (about 150,000 codes at 8 MiB, 4,800 at 256 KiB: a 500); 2,000
 * codes of 32 characters with 16-digit counts are about 210 KB, under the smallest bus (256 KiB).
 */
export const SUMMARY_PAGE_SIZE = 2000

/**
 * What a scan row weighs besides its CSV, for the bulk collection (ChunkShape.rowBytes). A scan
 * export reads and formats on the thread that streams it (one process), two objects a row (the
 * store's and rowOf's) for 137 bytes of CSV: counted by its CSV alone it peaked at 119-120 MB
 * against the 120 MB target; with 100 bytes a row, 111-114 MB, at 1.79-1.97 s instead of
 * 1.67-1.88 s for 1M rows (target 4 s) (bench/ANALYSIS.md, sixteenth session).
 */
const SCAN_ROW_BYTES = 100

export interface AnalyticsDeps {
  store: AnalyticsStore
  directory: CodeDirectory
  /** User agent -> device, OS, browser, bot; default: parseAgent behind an LRU cache. */
  agentOf?: (userAgent: string) => Agent
  /** Rows per export chunk; default EXPORT_PAGE_SIZE. */
  exportPageSize?: number
  /** Codes per summary page; default SUMMARY_PAGE_SIZE. */
  summaryPageSize?: number
}

export type AnalyticsService = ReturnType<typeof createAnalyticsService>

const notFound = (code: string) => new AppError('not_found', `no dynamic QR code ${JSON.stringify(code.slice(0, 100))} in this library`)
const rowOf = ({ scanned_at, ...scan }: StoredScan): ScanRow => ({ ...scan, scanned_at: Math.floor(scanned_at / 1000) })

/** Scan ingestion and the analytics of a library's dynamic codes. */
export function createAnalyticsService(deps: AnalyticsDeps) {
  const { store, directory, agentOf = createAgentCache(), exportPageSize = EXPORT_PAGE_SIZE, summaryPageSize = SUMMARY_PAGE_SIZE } = deps
  const ingestBatch = createScanIngest(store, agentOf)

  /** The code of this library, soft-deleted included (its history is kept); else 404. */
  async function owned(principal: Principal, code: string): Promise<void> {
    if (!isIssuableCode(code) || !(await directory.find(principal, code))) throw notFound(code)
  }

  return {
    /**
     * Applies a batch of scan events as delivered (raw payloads): malformed events are dropped
     * (logged), so are bots by isbot's list; the rest are enriched and stored, once each.
     * Resolves with how many were new; rejects only when the store does.
     */
    async ingest(events: unknown[], writing?: () => boolean): Promise<number> {
      const result = await ingestBatch(events, writing)
      reportIngest(result)
      return result.applied
    },

    /** Totals over `from`/`to` of a page of the library's live codes, zeros included; `cursor` null starts, a page's `next_cursor` continues. */
    async summary(principal: Principal, query: Record<string, string | string[]>, cursor: string | null): Promise<SummaryPage> {
      const range = parseDayRange(query)
      const page = await directory.liveCodes(principal, { cursor, limit: summaryPageSize })
      return { analytics: await store.summary(page.codes, range), next_cursor: page.next_cursor }
    },

    /** The breakdown of one code of the library (also when soft-deleted); the query is checked first. */
    async breakdown(principal: Principal, code: string, query: Record<string, string | string[]>): Promise<CodeBreakdown> {
      const range = parseDayRange(query)
      await owned(principal, code)
      const [breakdown, fallback_scans] = await Promise.all([store.breakdown(code, range), store.fallbackCount(code, range)])
      return { code, ...breakdown, fallback_scans }
    },

    /** The resolver's seed of a capped code (any library: the resolver is trusted like dynamic.v1.resolve): all-time counted scans. */
    async count(code: string): Promise<ScanCount> {
      if (!isIssuableCode(code)) return { scans: 0 }
      const [totals] = await store.summary([code], ALL_TIME)
      return { scans: totals?.total_scans ?? 0 }
    },

    /** One chunk of the per-scan CSV export; `cursor` null starts it (and only that chunk has the header). */
    async exportPage(principal: Principal, code: string, query: Record<string, string | string[]>, cursor: string | null): Promise<ExportChunk> {
      const range = parseDayRange(query)
      const after = cursor === null ? undefined : decodeScanCursor(cursor)
      await owned(principal, code)
      const read = async (limit: number) => {
        const page = await store.exportPage(code, { range, after, limit })
        return { items: page.items.map(rowOf), next: page.next }
      }
      return csvChunk({ columns: SCAN_EXPORT_COLUMNS, limit: exportPageSize, rowBytes: SCAN_ROW_BYTES }, read, cursor === null)
    },
  }
}
