import { describe, expect, it } from 'bun:test'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAnalyticsStore } from '../src/adapters/analytics-store.sqlite'
import { createKnownSet } from '../src/known-set'
import { ALL_TIME } from '../src/days'
import { DAY, scan, T0, visitor } from './fixtures'
import type { StoredScan } from '../src/ports'

describe('createKnownSet', () => {
  it('remembers at least the last maxEntries / 2 keys and at most maxEntries', () => {
    const known = createKnownSet(10)
    for (let i = 0; i < 23; i++) known.add(`k${i}`)
    expect(Array.from({ length: 23 }, (_, i) => known.has(`k${i}`))).toEqual(Array.from({ length: 23 }, (_, i) => i >= 15))
    expect(known.size).toBeLessThanOrEqual(10)
  })
})

describe('SQLite analytics store: visitors remembered between batches', () => {
  const uniques = async (store: ReturnType<typeof createSqliteAnalyticsStore>) => {
    const [summary] = await store.summary(['Code0001'], ALL_TIME)
    const { daily } = await store.breakdown('Code0001', ALL_TIME)
    return { total: summary!.total_scans, unique: summary!.unique_scans, daily: daily.map((d) => [d.date, d.scans, d.unique_scans]) }
  }

  for (const knownVisitors of [200_000, 2])
    it(`counts uniques exactly over many batches, per code and per day (remembering ${knownVisitors} visitor-days)`, async () => {
      const store = createSqliteAnalyticsStore(openSqlite(':memory:'), { knownVisitors })
      let n = 0
      // 3 batches x 2 days x 5 visitors, each visitor twice a day per batch.
      for (let batch = 0; batch < 3; batch++) {
        const scans: StoredScan[] = []
        for (const day of [0, 1]) for (let v = 0; v < 10; v++) scans.push(scan(++n, { visitor_id: visitor(v % 5), scanned_at: T0 + day * DAY }))
        await store.applyScans(scans)
      }
      expect(await uniques(store)).toEqual({ total: 60, unique: 5, daily: [['2025-01-10', 30, 5], ['2025-01-11', 30, 5]] })
    })

  it('still counts a visitor as new after the batch that first brought it was rolled back', async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteAnalyticsStore(db)
    // The second scan cannot be written (a value SQLite cannot bind): the whole batch rolls back, the visitor with it.
    const broken = [scan(1, { visitor_id: visitor(7) }), { ...scan(2), country: { not: 'a string' } } as unknown as StoredScan]
    await expect(store.applyScans(broken)).rejects.toThrow()
    expect(await store.summary(['Code0001'], ALL_TIME)).toEqual([{ code: 'Code0001', total_scans: 0, unique_scans: 0 }])
    await store.applyScans([scan(3, { visitor_id: visitor(7) })])
    expect(await uniques(store)).toEqual({ total: 1, unique: 1, daily: [['2025-01-10', 1, 1]] })
  })
})
