import type { DayCount } from './aggregates'
import { estimate, mergeInto, newSketch, type Sketch } from './sketch'

/**
 * Up to this many visitor-days (the sum of the range's daily uniques) a range's distinct
 * visitors are counted exactly from the visitor rows; above it they are estimated from the
 * days' sketches (sketch.ts, ≈ 0.8 % standard error), so a range read costs one fixed-size row
 * per day however many visitors it has. README "Analytics", docs/decisions.md §6.
 */
export const EXACT_VISITOR_DAYS = 20_000

/** Options of both AnalyticsStore adapters. */
export interface AnalyticsStoreOptions {
  /** Visitor-days up to which a range's distinct visitors are exact (EXACT_VISITOR_DAYS); tests lower it. */
  exactVisitorDays?: number
  /** (code, day, visitor) triples the SQLite store remembers as stored, so a returning visitor's scan skips the visitor tables. Default 200 000 (~30 MB). */
  knownVisitors?: number
}

/** How a store reads a range's distinct visitors: exactly, or as one sketch per day of `days`. */
export interface VisitorReads {
  exact(): number | Promise<number>
  sketches(): Sketch[] | Promise<Sketch[]>
}

/** Whether uniquesOver counts the distinct visitors of `days` exactly (their visitor-days within the bound). */
export const countedExactly = (days: readonly DayCount[], exactUpTo = EXACT_VISITOR_DAYS): boolean =>
  days.reduce((visitorDays, day) => visitorDays + day.uniques, 0) <= exactUpTo

/**
 * Distinct visitors over `days` (the range's per-day rows). An estimate is kept within what the
 * exact daily counts prove: at least the busiest day's visitors, at most their sum.
 */
export async function uniquesOver(days: DayCount[], reads: VisitorReads, exactUpTo = EXACT_VISITOR_DAYS): Promise<number> {
  if (countedExactly(days, exactUpTo)) return reads.exact()
  let upper = 0
  let lower = 0
  for (const day of days) {
    upper += day.uniques
    if (day.uniques > lower) lower = day.uniques
  }
  const union = newSketch()
  for (const sketch of await reads.sketches()) mergeInto(union, sketch)
  return Math.min(upper, Math.max(lower, estimate(union)))
}
