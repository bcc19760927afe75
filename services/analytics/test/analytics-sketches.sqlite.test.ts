import { describe, expect, it } from 'bun:test'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAnalyticsStore } from '../src/adapters/analytics-store.sqlite'
import { DAY, scan, T0, visitor } from './fixtures'

// Above the exact limit a range's distinct visitors come from one sketch row per day, never from
// the visitor rows (BENCHMARKS.md scenario 7); a day stored before sketches gets one built once.
describe('range uniques from day sketches (SQLite)', () => {
  const range = { from: '2025-01-10', to: '2025-01-11' }
  const history = [
    ...Array.from({ length: 400 }, (_, i) => scan(i, { scanned_at: T0 + (i % 2) * DAY, visitor_id: visitor(i % 250) })),
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
    expect(Math.abs(before - 250)).toBeLessThanOrEqual(5)
    db.run('DELETE FROM day_visitors')
    expect((await store.breakdown('Code0001', range)).unique_scans).toBe(before)
    db.close()
  })

  it('builds and keeps the sketch of a day stored without one', async () => {
    const { db, store } = await open()
    const before = (await store.breakdown('Code0001', range)).unique_scans
    db.run('DELETE FROM day_sketches')
    expect((await store.breakdown('Code0001', range)).unique_scans).toBe(before)
    expect(db.query('SELECT count(*) AS n FROM day_sketches').get()).toEqual({ n: 2 })
    db.close()
  })
})
