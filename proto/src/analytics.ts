import { type Static, Type as T } from '@sinclair/typebox'
import { Principal } from './principal'
import { ListQuery } from './paging'

/** Subjects of services/analytics (scan analytics of dynamic codes); queue group `analytics`. */
export const ANALYTICS_SUBJECTS = {
  /** SummaryRequest -> SummaryPage: the totals of a page of the library's live codes, zeros included. */
  summary: 'analytics.v1.summary',
  /** BreakdownRequest -> CodeBreakdown; not_found when the code was never in this library. */
  breakdown: 'analytics.v1.breakdown',
  /** One chunk of the per-scan CSV export: ScanExportRequest -> ExportChunk. */
  export: 'analytics.v1.export',
  /** The resolver's seed of a capped code: ScanCountRequest -> ScanCount (all-time counted scans, any library). */
  count: 'analytics.v1.count',
} as const
export const ANALYTICS_QUEUE = 'analytics'

/** Envelopes the gateway sends; `query` is the query string as sent (`from`, `to`: YYYY-MM-DD, UTC, inclusive). */
/**
 * `cursor`: null (or absent, as a gateway from before summary pages sends it) for the first page
 * of the summary, a page's `next_cursor` for the next; opaque.
 */
export const SummaryRequest = T.Object({ principal: Principal, query: ListQuery, cursor: T.Optional(T.Union([T.String(), T.Null()])) })
export type SummaryRequest = Static<typeof SummaryRequest>
export const BreakdownRequest = T.Object({ principal: Principal, code: T.String(), query: ListQuery })
export type BreakdownRequest = Static<typeof BreakdownRequest>
export const ScanExportRequest = T.Object({
  principal: Principal,
  code: T.String(),
  query: ListQuery,
  cursor: T.Union([T.String(), T.Null()]),
})
export type ScanExportRequest = Static<typeof ScanExportRequest>

const Count = T.Integer({ minimum: 0 })

export const ScanCountRequest = T.Object({ code: T.String({ maxLength: 64 }) })
export type ScanCountRequest = Static<typeof ScanCountRequest>
/** Counted scans of a code over all time: what total_scans of its breakdown shows. */
export const ScanCount = T.Object({ scans: Count })
export type ScanCount = Static<typeof ScanCount>
/** A UTC day, YYYY-MM-DD. */
export const Day = T.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' })
/** Distinct visitors over the query's range (README "Analytics"). */
const RangeUniques = T.Integer({ minimum: 0, description: 'Distinct visitors over the range: exact for all time and for every day; over a partial range of more than 20,000 visitor-days, estimated from per-day HyperLogLog sketches (about 0.8 % standard error, never below the busiest day nor above the sum of the days).' })

/** Totals of one code (docs/decisions.md §6). */
export const CodeSummary = T.Object({ code: T.String(), total_scans: Count, unique_scans: RangeUniques })
export type CodeSummary = Static<typeof CodeSummary>
export const AnalyticsSummary = T.Object({ analytics: T.Array(CodeSummary) })
export type AnalyticsSummary = Static<typeof AnalyticsSummary>
/** One page of AnalyticsSummary on the bus: the gateway joins the pages into one answer. */
export const SummaryPage = T.Object({ analytics: T.Array(CodeSummary), next_cursor: T.Union([T.String(), T.Null()]) })
export type SummaryPage = Static<typeof SummaryPage>

export const DailyCount = T.Object({ date: Day, scans: Count, unique_scans: Count })
export type DailyCount = Static<typeof DailyCount>

/**
 * The breakdown of one code (docs/decisions.md §6): `daily` ascending, days with scans only;
 * every other list by scans descending (ties by name). Unique = distinct visitor ids, per day
 * in `daily`, over the whole range in the totals.
 */
export const CodeBreakdown = T.Object({
  code: T.String(),
  total_scans: Count,
  unique_scans: RangeUniques,
  daily: T.Array(DailyCount),
  countries: T.Array(T.Object({ country: T.String(), scans: Count })),
  devices: T.Array(T.Object({ device: T.String(), scans: Count })),
  os: T.Array(T.Object({ os: T.String(), scans: Count })),
  browsers: T.Array(T.Object({ browser: T.String(), scans: Count })),
  /** Scans sent to fallback_url once the code was expired or capped, over the range; never in total_scans or the lists. */
  fallback_scans: T.Integer({ minimum: 0, description: 'Scans sent to fallback_url over the range because the code was expired or capped (README "Expiring and capped codes"); not part of total_scans, unique_scans or any list.' }),
})
export type CodeBreakdown = Static<typeof CodeBreakdown>

/** One row of the per-scan export; `scanned_at` in epoch seconds (docs/decisions.md §7). */
export const ScanRow = T.Object({
  scan_id: T.String(),
  code: T.String(),
  scanned_at: Count,
  country: T.String(),
  device: T.String(),
  os: T.String(),
  browser: T.String(),
  visitor_id: T.String(),
})
export type ScanRow = Static<typeof ScanRow>

/** CSV columns of /dynqrcodes/{code}/analytics/export, in order (docs/decisions.md §7). */
export const SCAN_EXPORT_COLUMNS = [
  'scan_id', 'code', 'scanned_at', 'country', 'device', 'os', 'browser', 'visitor_id',
] as const satisfies readonly (keyof ScanRow)[]
