import { AnalyticsQuery, AppError, badQueryValue, decodeQuery } from '@lr/proto'

/** A range of UTC days, both ends inclusive (`YYYY-MM-DD`); null: unbounded on that side. */
export interface DayRange {
  from: string | null
  to: string | null
}

export const ALL_TIME: DayRange = { from: null, to: null }

const DAY_MS = 86_400_000

/** The UTC day (`YYYY-MM-DD`) of an epoch-milliseconds time. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** Epoch milliseconds of 00:00 UTC of a day. */
export const dayStartMs = (day: string): number => Date.parse(`${day}T00:00:00Z`)

/** The range in epoch milliseconds, `[start, end)`; unbounded sides become 0 and the largest safe integer. */
export function msRange(range: DayRange): { start: number; end: number } {
  return {
    start: range.from === null ? 0 : dayStartMs(range.from),
    end: range.to === null ? Number.MAX_SAFE_INTEGER : dayStartMs(range.to) + DAY_MS,
  }
}

/** True when the range holds every day from `first` to `last` (a code's first and last day with scans). */
export const coversAll = (range: DayRange, first: string, last: string): boolean =>
  (range.from === null || range.from <= first) && (range.to === null || range.to >= last)

/** A day the pattern lets through (decodeQuery) but the calendar has not, such as 2025-02-30, which Date would roll over. */
function checkRealDay(name: 'from' | 'to', value: string): void {
  const ms = dayStartMs(value)
  if (!Number.isFinite(ms) || dayOf(ms) !== value) throw badQueryValue(AnalyticsQuery, name)
}

/** Parses `from` and `to` of an analytics query (AnalyticsQuery); any other parameter, a bad date or from after to is a 400. */
export function parseDayRange(query: Record<string, string | string[]>): DayRange {
  const { from, to } = decodeQuery(AnalyticsQuery, query)
  if (from !== undefined) checkRealDay('from', from)
  if (to !== undefined) checkRealDay('to', to)
  if (from !== undefined && to !== undefined && from > to) throw new AppError('bad_request', 'from must not be after to')
  return { from: from ?? null, to: to ?? null }
}
