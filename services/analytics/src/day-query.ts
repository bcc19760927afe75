import { AnalyticsQuery, AppError, badQueryValue, decodeQuery } from '@lr/proto'
import { type DayRange, dayOf, dayStartMs } from './days'

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
