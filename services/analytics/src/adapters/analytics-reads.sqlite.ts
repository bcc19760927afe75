import type { Database } from 'bun:sqlite'
import type { CodeSummary } from '@lr/proto'
import { breakdownOf, type DayCount, type DimCount, emptyBreakdown } from '../aggregates'
import { coversAll, type DayRange, msRange } from '../days'
import type { AnalyticsStore, Breakdown, StoredScan } from '../ports'
import { parsePosition, positionOf } from '../position'
import { type AnalyticsStoreOptions, countedExactly, uniquesOver } from '../range-uniques'
import { daySketchStore, type ReadSketch } from './day-sketches.sqlite'

type Totals = { scans: number; uniques: number }
type Days = { code: string; from: string; to: string }
/** A range's days as one read found them, with its exact distinct visitors or the days' sketches (whichever range-uniques.ts counts from). */
type RangeRead = { days: DayCount[]; exact?: number; sketches: ({ day: string } & ReadSketch)[] }

/**
 * A position of this store: `<scanned_at>:<scan_id>`, as the Mongo store's. One whose tie is
 * all digits is a seq, issued before the raw scans were keyed by export order (an export under
 * way across that move; the resolver's scan ids are UUIDs): it continues from the start of its
 * millisecond, so it may repeat that millisecond's scans but never skips one.
 */
function positionAfter(position: string): { at: number; tie: string } {
  const { at, tie } = parsePosition(position)
  return { at, tie: /^\d+$/.test(tie) ? '' : tie }
}

const LOWEST = '0000-00-00'
const HIGHEST = '9999-99-99'

/** The read half of the SQLite AnalyticsStore (tables: see analytics-store.sqlite.ts). */
export function createSqliteReads(db: Database, options: AnalyticsStoreOptions = {}): Pick<AnalyticsStore, 'summary' | 'breakdown' | 'exportPage'> {
  const first = db.prepare<{ day: string }, [string]>('SELECT day FROM day_totals WHERE code = ? ORDER BY day LIMIT 1')
  const last = db.prepare<{ day: string }, [string]>('SELECT day FROM day_totals WHERE code = ? ORDER BY day DESC LIMIT 1')
  const allTime = db.prepare<Totals, [string]>('SELECT scans, uniques FROM code_totals WHERE code = ?')
  const allTimeOf = db.prepare<Totals & { code: string }, [string]>(
    'SELECT code, scans, uniques FROM code_totals WHERE code IN (SELECT value FROM json_each(?))',
  )
  const allDays = db.prepare<DayCount, [string]>('SELECT day, scans, uniques FROM day_totals WHERE code = ? ORDER BY day')
  const allDims = db.prepare<DimCount, [string]>('SELECT dim, value, scans FROM code_dims WHERE code = ?')
  const someDays = db.prepare<DayCount, Days>(
    'SELECT day, scans, uniques FROM day_totals WHERE code = $code AND day BETWEEN $from AND $to ORDER BY day',
  )
  const someVisitors = db.prepare<{ uniques: number }, Days>(
    'SELECT count(DISTINCT visitor_id) AS uniques FROM day_visitors WHERE code = $code AND day BETWEEN $from AND $to',
  )
  const someDims = db.prepare<DimCount, Days>(
    'SELECT dim, value, sum(scans) AS scans FROM day_dims WHERE code = $code AND day BETWEEN $from AND $to GROUP BY dim, value',
  )
  // The table's own key order (code, scanned_at, scan_id): a page is one range read.
  const page = db.prepare<StoredScan, { code: string; start: number; end: number; at: number; tie: string; limit: number }>(
    `SELECT scan_id, code, scanned_at, country, device, os, browser, visitor_id FROM scans
     WHERE code = $code AND scanned_at >= $start AND scanned_at < $end AND (scanned_at, scan_id) > ($at, $tie)
     ORDER BY scanned_at, scan_id LIMIT $limit`,
  )

  /** How to read the code over the range: the all-time rows when the range holds every day it has scans on. */
  function plan(code: string, range: DayRange): 'none' | 'all' | Days {
    const firstDay = first.get(code)?.day
    if (firstDay === undefined) return 'none'
    if (coversAll(range, firstDay, last.get(code)!.day)) return 'all'
    return { code, from: range.from ?? LOWEST, to: range.to ?? HIGHEST }
  }

  // Each answer reads in one transaction, so all its statements see one snapshot: a batch the
  // ingestion Worker (or another analytics process on the file) commits meanwhile is in every
  // part of the answer or in none, and a breakdown's buckets add up to its totals. Only reads
  // run inside: a write there would meet SQLITE_BUSY_SNAPSHOT once another connection committed
  // after the snapshot, so a sketch built from visitor rows is kept after the commit.
  const inOneRead = db.transaction((read: () => unknown) => read()) as <T>(read: () => T) => T
  const sketches = daySketchStore(db)

  /** Inside a read: a range's days, and what its distinct visitors are counted from (range-uniques.ts). */
  function readRange(how: Days): RangeRead {
    const days = someDays.all(how)
    if (countedExactly(days, options.exactVisitorDays)) return { days, exact: someVisitors.get(how)!.uniques, sketches: [] }
    const read = days.map((d) => ({ day: d.day, ...sketches.read(how.code, d.day) }))
    return { days, sketches: read }
  }
  /** After the read: the range's distinct visitors, and the sketches it built kept. */
  function uniquesOf(code: string, { days, exact, sketches: read }: RangeRead): Promise<number> {
    for (const { day, sketch, built } of read) if (built) sketches.keep(code, day, sketch)
    return uniquesOver(days, { exact: () => exact!, sketches: () => read.map((r) => r.sketch) }, options.exactVisitorDays)
  }

  async function totals(code: string, range: DayRange): Promise<Totals> {
    const read = inOneRead((): Totals | RangeRead => {
      const how = plan(code, range)
      if (how === 'none' || how === 'all') return allTime.get(code) ?? { scans: 0, uniques: 0 }
      return readRange(how)
    })
    if (!('days' in read)) return read
    return { scans: read.days.reduce((sum, d) => sum + d.scans, 0), uniques: await uniquesOf(code, read) }
  }

  return {
    async summary(codes, range) {
      const summary = (code: string, t: Totals): CodeSummary => ({ code, total_scans: t.scans, unique_scans: t.uniques })
      if (range.from !== null || range.to !== null) return Promise.all(codes.map(async (code) => summary(code, await totals(code, range))))
      const known = new Map(allTimeOf.all(JSON.stringify(codes)).map((row) => [row.code, row]))
      return codes.map((code) => summary(code, known.get(code) ?? { scans: 0, uniques: 0 }))
    },

    async breakdown(code, range) {
      const read = inOneRead((): { all: Breakdown } | { range: RangeRead; dims: DimCount[] } | undefined => {
        const how = plan(code, range)
        if (how === 'none') return undefined
        if (how === 'all') return { all: breakdownOf(allTime.get(code)!, allDays.all(code), allDims.all(code)) }
        return { range: readRange(how), dims: someDims.all(how) }
      })
      if (read === undefined) return emptyBreakdown()
      if ('all' in read) return read.all
      const scans = read.range.days.reduce((sum, d) => sum + d.scans, 0)
      return breakdownOf({ scans, uniques: await uniquesOf(code, read.range) }, read.range.days, read.dims)
    },

    async exportPage(code, { range, after, limit }) {
      const from = after === undefined ? { at: -1, tie: '' } : positionAfter(after)
      const { start, end } = msRange(range)
      // The lower bound seeks to the cursor: SQLite does not seek on the row-value comparison,
      // so with the range's start alone every page would rescan all earlier scans (O(n²)).
      const rows = page.all({ code, start: Math.max(start, from.at), end, at: from.at, tie: from.tie, limit: limit + 1 })
      const more = rows.length > limit
      if (more) rows.pop()
      const last = rows[rows.length - 1]
      return { items: rows, next: more ? positionOf(last!.scanned_at, last!.scan_id) : null }
    },
  }
}
