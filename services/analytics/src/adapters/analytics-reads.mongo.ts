import { breakdownOf, type DayCount, type DimCount, emptyBreakdown } from '../aggregates'
import { coversAll, type DayRange, msRange } from '../days'
import type { AnalyticsStore, StoredScan } from '../ports'
import { parsePosition, positionOf } from '../position'
import type { AnalyticsCollections } from './analytics-collections.mongo'
import type { mongoSketches } from './analytics-sketches.mongo'
import { type AnalyticsStoreOptions, countedExactly, uniquesOver } from '../range-uniques'

type Totals = { scans: number; uniques: number }
type Days = { code: string; day: { $gte: string; $lte: string } }

const ZERO: Totals = { scans: 0, uniques: 0 }
const dayCount = (d: { day: string; scans: number; uniques: number }): DayCount => ({ day: d.day, scans: d.scans, uniques: d.uniques })
const dimCount = (d: { dim: string; value: string; scans: number }): DimCount => ({ dim: d.dim, value: d.value, scans: d.scans })

/** The read half of the Mongo AnalyticsStore (collections: see analytics-store.mongo.ts). */
export function createMongoReads(c: AnalyticsCollections, sketches: ReturnType<typeof mongoSketches>, options: AnalyticsStoreOptions = {}): Pick<AnalyticsStore, 'summary' | 'breakdown' | 'exportPage'> {
  const edgeDay = async (code: string, order: 1 | -1) =>
    (await c.dayTotals.find({ code }, { projection: { day: 1 } }).sort({ day: order }).limit(1).next())?.day

  /** How to read the code over the range: the all-time documents when the range holds every day it has scans on. */
  async function plan(code: string, range: DayRange): Promise<'none' | 'all' | Days> {
    const first = await edgeDay(code, 1)
    if (first === undefined) return 'none'
    if (coversAll(range, first, (await edgeDay(code, -1))!)) return 'all'
    return { code, day: { $gte: range.from ?? '0000-00-00', $lte: range.to ?? '9999-99-99' } }
  }

  const allTime = async (code: string): Promise<Totals> => {
    const doc = await c.codeTotals.findOne({ _id: code })
    return doc ? { scans: doc.scans, uniques: doc.uniques } : ZERO
  }

  async function visitorsIn(days: Days): Promise<number> {
    const [row] = await c.dayVisitors.aggregate<{ n: number }>([{ $match: days }, { $group: { _id: '$visitor_id' } }, { $count: 'n' }]).toArray()
    return row?.n ?? 0
  }

  /**
   * Scans per dimension value over the days. The group key is unpacked here, not by a $project
   * of '$_id.dim' (FerretDB v1 returns such a dotted path literally; README "MongoDB compatibility").
   */
  async function dimsIn(days: Days): Promise<DimCount[]> {
    const groups = await c.dayDims
      .aggregate<{ _id: { dim: string; value: string }; scans: number }>([{ $match: days }, { $group: { _id: { dim: '$dim', value: '$value' }, scans: { $sum: '$scans' } } }])
      .toArray()
    return groups.map(({ _id, scans }) => ({ dim: _id.dim, value: _id.value, scans }))
  }

  /** Distinct visitors of each code over the days, counted exactly, in one command (each code's visitors grouped once, then counted). */
  async function visitorsOfCodes(codes: string[], day: Days['day']): Promise<Map<string, number>> {
    if (codes.length === 0) return new Map()
    const visitors = await c.dayVisitors
      .aggregate<{ _id: string; n: number }>([{ $match: { code: { $in: codes }, day } }, { $group: { _id: { code: '$code', visitor: '$visitor_id' } } }, { $group: { _id: '$_id.code', n: { $sum: 1 } } }])
      .toArray()
    return new Map(visitors.map((v) => [v._id, v.n]))
  }

  /**
   * Totals of every code over a range of days, read as the breakdown reads one code, so the two
   * routes agree: a code whose every scan is in the range answers its all-time totals; any other
   * its range's scans, and its distinct visitors exact up to the visitor-days bound, else from the
   * days' sketches (range-uniques.ts). Three commands whatever the number of codes (the all-time
   * totals, the range's days, one count of visitors), and the sketches of each code above the bound.
   */
  async function totalsOver(codes: string[], range: DayRange): Promise<Map<string, Totals>> {
    const day = { $gte: range.from ?? '0000-00-00', $lte: range.to ?? '9999-99-99' }
    const [allTimes, inRange] = await Promise.all([c.codeTotals.find({ _id: { $in: codes } }).toArray(), c.dayTotals.find({ code: { $in: codes }, day }, { projection: { _id: 0, code: 1, day: 1, scans: 1, uniques: 1 } }).toArray()])
    const allTimeOf = new Map(allTimes.map((doc) => [doc._id, doc]))
    const found = new Map<string, Totals>()
    const daysOf = new Map<string, DayCount[]>()
    for (const doc of inRange) {
      const days = daysOf.get(doc.code)
      if (days) days.push(dayCount(doc))
      else daysOf.set(doc.code, [dayCount(doc)])
    }
    const partial: { code: string; days: DayCount[]; scans: number }[] = []
    for (const [code, days] of daysOf) {
      const scans = days.reduce((sum, d) => sum + d.scans, 0)
      const allTime = allTimeOf.get(code)
      // Every day row holds a counted scan: the range's scans are all of them only when it covers every such day (plan's 'all').
      if (allTime?.scans === scans) found.set(code, { scans, uniques: allTime.uniques })
      else partial.push({ code, days, scans })
    }
    const exact = await visitorsOfCodes(partial.filter(({ days }) => countedExactly(days, options.exactVisitorDays)).map(({ code }) => code), day)
    await Promise.all(partial.map(async ({ code, scans, days }) => {
      const uniques = await uniquesOver(days, { exact: () => exact.get(code) ?? 0, sketches: () => sketches.ofDays(code, days.map((d) => d.day)) }, options.exactVisitorDays)
      found.set(code, { scans, uniques })
    }))
    return found
  }

  return {
    async summary(codes, range) {
      if (codes.length === 0) return []
      const found = new Map<string, Totals>()
      if (range.from === null && range.to === null) {
        for (const doc of await c.codeTotals.find({ _id: { $in: codes } }).toArray()) found.set(doc._id, doc)
      } else {
        for (const [code, totals] of await totalsOver(codes, range)) found.set(code, totals)
      }
      return codes.map((code) => {
        const t = found.get(code) ?? ZERO
        return { code, total_scans: t.scans, unique_scans: t.uniques }
      })
    },

    async breakdown(code, range) {
      const how = await plan(code, range)
      if (how === 'none') return emptyBreakdown()
      if (how === 'all') {
        const [t, days, dims] = await Promise.all([allTime(code), c.dayTotals.find({ code }).toArray(), c.codeDims.find({ code }).toArray()])
        return breakdownOf(t, days.map(dayCount), dims.map(dimCount))
      }
      const [days, dims] = await Promise.all([c.dayTotals.find(how).toArray().then((docs) => docs.map(dayCount)), dimsIn(how)])
      const uniques = await uniquesOver(days, { exact: () => visitorsIn(how), sketches: () => sketches.ofDays(code, days.map((d) => d.day)) }, options.exactVisitorDays)
      return breakdownOf({ scans: days.reduce((sum, d) => sum + d.scans, 0), uniques }, days, dims)
    },

    async exportPage(code, { range, after, limit }) {
      const { start, end } = msRange(range)
      const from = after === undefined ? null : parsePosition(after)
      const docs = await c.scans
        .find({
          code,
          // Bounded below by the cursor too, so each page seeks instead of rescanning (O(n²)).
          scanned_at: { $gte: from ? Math.max(start, from.at) : start, $lt: end },
          ...(from ? { $or: [{ scanned_at: { $gt: from.at } }, { scanned_at: from.at, _id: { $gt: from.tie } }] } : {}),
        })
        .sort({ scanned_at: 1, _id: 1 })
        .limit(limit + 1)
        .toArray()
      const more = docs.length > limit
      if (more) docs.pop()
      const items = docs.map(({ _id, ...rest }): StoredScan => ({ scan_id: _id, ...rest }))
      const last = items[items.length - 1]
      return { items, next: more ? positionOf(last!.scanned_at, last!.scan_id) : null }
    },
  }
}
