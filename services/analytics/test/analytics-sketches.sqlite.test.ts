import { describe, expect, it } from 'bun:test'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAnalyticsStore } from '../src/adapters/analytics-store.sqlite'
import { SKETCH_MIN_VISITORS } from '../src/sketch'
import { DAY, scan, T0, visitor } from './fixtures'

const sketchRows = (db: ReturnType<typeof openSqlite>) =>
  db.query<{ day: string }, []>('SELECT day FROM day_sketches ORDER BY day').all().map((row) => row.day)

// Above the exact limit a range's distinct visitors come from one sketch row per day, never from
// the visitor rows (BENCHMARKS.md scenario 7); a day stored before sketches gets one built once.
describe('range uniques from day sketches (SQLite)', () => {
  const range = { from: '2025-01-10', to: '2025-01-11' }
  // Two days of 300 visitors each (above SKETCH_MIN_VISITORS), 600 distinct.
  const history = [
    ...Array.from({ length: 1200 }, (_, i) => scan(i, { scanned_at: T0 + (i % 2) * DAY, visitor_id: visitor(i % 600) })),
    scan(9_999, { scanned_at: T0 + 4 * DAY }),
  ]
  const open = async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteAnalyticsStore(db, { exactVisitorDays: 50 })
    await store.applyScans(history)
    return { db, store }
  }

  it('reads no visitor row of the range', async () => {
    const { db, store } = await open()
    const before = (await store.breakdown('Code0001', range)).unique_scans
    expect(Math.abs(before - 600)).toBeLessThanOrEqual(12)
    db.run('DELETE FROM day_visitors')
    expect((await store.breakdown('Code0001', range)).unique_scans).toBe(before)
    db.close()
  })

  it('builds and keeps the sketch of a day stored without one', async () => {
    const { db, store } = await open()
    const before = (await store.breakdown('Code0001', range)).unique_scans
    db.run('DELETE FROM day_sketches')
    expect((await store.breakdown('Code0001', range)).unique_scans).toBe(before)
    expect(sketchRows(db)).toEqual(['2025-01-10', '2025-01-11'])
    db.close()
  })
})

// A sketch is 16 KiB whatever it holds: one per day with a scan was 16 KiB per code per day, the
// bulk of a soak's analytics file (165 of 206 MB, for 15 MB of scans). Only a day of more than
// SKETCH_MIN_VISITORS visitors has one; a smaller day is built from its rows when a range needs it.
describe('day sketches stored only above SKETCH_MIN_VISITORS (SQLite)', () => {
  const dayScans = (day: number, visitors: number, first: number) =>
    Array.from({ length: visitors }, (_, i) => scan(first + i, { scanned_at: T0 + day * DAY, visitor_id: visitor(day * 10_000 + i) }))
  const small = dayScans(0, SKETCH_MIN_VISITORS, 0)
  const crossing = dayScans(1, SKETCH_MIN_VISITORS + 1, 20_000)
  const half = SKETCH_MIN_VISITORS / 2

  it('stores none for a small day, one once a day passes the bound, and estimates over both', async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteAnalyticsStore(db, { exactVisitorDays: 50 })
    await store.applyScans([...small, ...crossing.slice(0, half), scan(90_000, { scanned_at: T0 + 4 * DAY })])
    expect(sketchRows(db)).toEqual([])
    await store.applyScans(crossing.slice(half)) // day 1 passes the bound: its sketch holds every visitor of the day
    expect(sketchRows(db)).toEqual(['2025-01-11'])
    const distinct = small.length + crossing.length
    const breakdown = await store.breakdown('Code0001', { from: '2025-01-10', to: '2025-01-11' })
    expect(breakdown.daily.map((d) => d.unique_scans)).toEqual([SKETCH_MIN_VISITORS, SKETCH_MIN_VISITORS + 1])
    expect(Math.abs(breakdown.unique_scans - distinct)).toBeLessThanOrEqual(Math.ceil(distinct * 0.02))
    expect(sketchRows(db)).toEqual(['2025-01-11']) // the read built day 0's and kept nothing
    db.close()
  })
})
