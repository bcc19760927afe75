import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { ALL_TIME } from '../src/days'
import type { AnalyticsStore } from '../src/ports'
import type { AnalyticsStoreOptions } from '../src/range-uniques'
import { exportContract } from './analytics-store.export.contract'
import { fallbackContract } from './analytics-store.fallback.contract'
import { DAY, HOUR, scan, T0, visitor } from './fixtures'

/** A fresh, empty store of one adapter, and how to dispose of it. */
export interface StoreHarness {
  store: AnalyticsStore
  cleanup(): Promise<void>
}

/**
 * Three days of one code: day 1 (2025-01-10) visitors 1, 1, 2 (iPhone DE, iPhone DE, Android US);
 * day 2 visitors 1 and 3 (iPad DE, Windows FR); day 3 visitor 2 (Android US). Plus one scan of another code.
 */
export const HISTORY = [
  scan(1),
  scan(2, { scanned_at: T0 + HOUR }),
  scan(3, { visitor_id: visitor(2), country: 'US', os: 'Android', browser: 'Chrome', scanned_at: T0 + 2 * HOUR }),
  scan(4, { scanned_at: T0 + DAY, device: 'tablet' }),
  scan(5, { scanned_at: T0 + DAY + HOUR, visitor_id: visitor(3), country: 'FR', device: 'desktop', os: 'Windows', browser: 'Chrome' }),
  scan(6, { scanned_at: T0 + 2 * DAY, visitor_id: visitor(2), country: 'US', os: 'Android', browser: 'Chrome' }),
  scan(7, { code: 'Other001' }),
]

/** The behaviour every AnalyticsStore adapter must show; run once per reachable adapter. */
export function analyticsStoreContract(open: (options?: AnalyticsStoreOptions) => Promise<StoreHarness>) {
  let h: StoreHarness
  let store: AnalyticsStore
  beforeEach(async () => {
    h = await open()
    store = h.store
  })
  afterEach(() => h.cleanup())

  describe('applyScans', () => {
    it('answers how many scans were new', async () => {
      expect(await store.applyScans(HISTORY)).toBe(7)
    })

    it('changes nothing for scans already stored, answering 0', async () => {
      await store.applyScans(HISTORY)
      expect(await store.applyScans(HISTORY)).toBe(0)
      expect(await store.summary(['Code0001', 'Other001'], ALL_TIME)).toEqual([
        { code: 'Code0001', total_scans: 6, unique_scans: 3 },
        { code: 'Other001', total_scans: 1, unique_scans: 1 },
      ])
    })

    it('counts a scan repeated within one call once', async () => {
      expect(await store.applyScans([scan(1), scan(1), scan(2)])).toBe(2)
      expect((await store.breakdown('Code0001', ALL_TIME)).total_scans).toBe(2)
    })

    it('counts only the new scans of a call that mixes new and known ones', async () => {
      await store.applyScans([scan(1), scan(2)])
      expect(await store.applyScans([scan(2), scan(3, { visitor_id: visitor(9) })])).toBe(1)
      expect(await store.summary(['Code0001'], ALL_TIME)).toEqual([{ code: 'Code0001', total_scans: 3, unique_scans: 2 }])
    })

    it('counts the same whether scans arrive in one call or one by one', async () => {
      await store.applyScans(HISTORY)
      const together = await store.breakdown('Code0001', ALL_TIME)
      const fresh = await open()
      try {
        for (const one of HISTORY) await fresh.store.applyScans([one])
        expect(await fresh.store.breakdown('Code0001', ALL_TIME)).toEqual(together)
        expect(together.unique_scans).toBe(3)
      } finally {
        await fresh.cleanup()
      }
    })

    // FerretDB v1.24 never answered an update command in which 100 statements matched a
    // document, and then froze the whole database (README "MongoDB compatibility").
    it('adds a second batch to 120 counters of one dimension', async () => {
      const browsers = Array.from({ length: 120 }, (_, i) => `Browser ${i}`)
      await store.applyScans(browsers.map((browser, i) => scan(i, { browser })))
      expect(await store.applyScans(browsers.map((browser, i) => scan(1000 + i, { browser, visitor_id: visitor(2) })))).toBe(120)
      const { total_scans, browsers: counted } = await store.breakdown('Code0001', ALL_TIME)
      expect([total_scans, counted.length, counted.every((b) => b.scans === 2)]).toEqual([240, 120, true])
    }, 30_000)

    it('answers 0 for an empty call', async () => {
      expect(await store.applyScans([])).toBe(0)
    })
  })

  describe('breakdown', () => {
    beforeEach(() => store.applyScans(HISTORY))

    it('answers every number of the whole history', async () => {
      expect(await store.breakdown('Code0001', ALL_TIME)).toEqual({
        total_scans: 6,
        unique_scans: 3,
        daily: [
          { date: '2025-01-10', scans: 3, unique_scans: 2 },
          { date: '2025-01-11', scans: 2, unique_scans: 2 },
          { date: '2025-01-12', scans: 1, unique_scans: 1 },
        ],
        countries: [{ country: 'DE', scans: 3 }, { country: 'US', scans: 2 }, { country: 'FR', scans: 1 }],
        devices: [{ device: 'mobile', scans: 4 }, { device: 'desktop', scans: 1 }, { device: 'tablet', scans: 1 }],
        os: [{ os: 'iOS', scans: 3 }, { os: 'Android', scans: 2 }, { os: 'Windows', scans: 1 }],
        browsers: [{ browser: 'Chrome', scans: 3 }, { browser: 'Mobile Safari', scans: 3 }],
      })
    })

    it('counts only the days of a partial range, and distinct visitors over that range', async () => {
      expect(await store.breakdown('Code0001', { from: '2025-01-11', to: '2025-01-12' })).toEqual({
        total_scans: 3,
        unique_scans: 3,
        daily: [
          { date: '2025-01-11', scans: 2, unique_scans: 2 },
          { date: '2025-01-12', scans: 1, unique_scans: 1 },
        ],
        countries: [{ country: 'DE', scans: 1 }, { country: 'FR', scans: 1 }, { country: 'US', scans: 1 }],
        devices: [{ device: 'desktop', scans: 1 }, { device: 'mobile', scans: 1 }, { device: 'tablet', scans: 1 }],
        os: [{ os: 'Android', scans: 1 }, { os: 'Windows', scans: 1 }, { os: 'iOS', scans: 1 }],
        browsers: [{ browser: 'Chrome', scans: 2 }, { browser: 'Mobile Safari', scans: 1 }],
      })
    })

    it('counts a visitor seen on two days of the range once in the range total', async () => {
      const b = await store.breakdown('Code0001', { from: '2025-01-10', to: '2025-01-11' })
      expect([b.total_scans, b.unique_scans, b.daily.map((d) => d.unique_scans)]).toEqual([5, 3, [2, 2]])
    })

    it('answers the same for an open-ended range as for the days it holds', async () => {
      expect(await store.breakdown('Code0001', { from: '2025-01-11', to: null })).toEqual(
        await store.breakdown('Code0001', { from: '2025-01-11', to: '2025-01-12' }),
      )
      const until = await store.breakdown('Code0001', { from: null, to: '2025-01-10' })
      expect([until.total_scans, until.unique_scans, until.daily.length]).toEqual([3, 2, 1])
    })

    it('answers the whole history for a range wider than it', async () => {
      expect(await store.breakdown('Code0001', { from: '2024-12-01', to: '2025-02-01' })).toEqual(await store.breakdown('Code0001', ALL_TIME))
    })

    it('answers zeros and empty lists for a range without scans', async () => {
      expect(await store.breakdown('Code0001', { from: '2025-02-01', to: '2025-02-02' })).toEqual({
        total_scans: 0, unique_scans: 0, daily: [], countries: [], devices: [], os: [], browsers: [],
      })
    })

    it('answers zeros and empty lists for a code without scans', async () => {
      expect(await store.breakdown('Never001', ALL_TIME)).toEqual({
        total_scans: 0, unique_scans: 0, daily: [], countries: [], devices: [], os: [], browsers: [],
      })
    })
  })

  describe('summary', () => {
    beforeEach(() => store.applyScans(HISTORY))

    it('answers every code in the order given, zeros for a code without scans', async () => {
      expect(await store.summary(['Never001', 'Code0001', 'Other001'], ALL_TIME)).toEqual([
        { code: 'Never001', total_scans: 0, unique_scans: 0 },
        { code: 'Code0001', total_scans: 6, unique_scans: 3 },
        { code: 'Other001', total_scans: 1, unique_scans: 1 },
      ])
    })

    it('counts only the range, distinct visitors over it', async () => {
      expect(await store.summary(['Code0001', 'Other001'], { from: '2025-01-11', to: '2025-01-11' })).toEqual([
        { code: 'Code0001', total_scans: 2, unique_scans: 2 },
        { code: 'Other001', total_scans: 0, unique_scans: 0 },
      ])
    })

    it('answers an empty list for no codes', async () => {
      expect(await store.summary([], ALL_TIME)).toEqual([])
    })
  })

  // Three days of 300 visitors each, overlapping by half (600 distinct), and a fourth day of one
  // scan, so that days 1-3 are a range, not all time. With exactVisitorDays lowered to 100 the
  // range's 900 visitor-days are read from the days' sketches (sketch.ts): an estimate.
  describe('distinct visitors over a range above the exact limit', () => {
    const perDay = 300
    const days = [0, 1, 2].flatMap((d) =>
      Array.from({ length: perDay }, (_, i) => scan(10_000 + d * perDay + i, { scanned_at: T0 + d * DAY, visitor_id: visitor(1000 + d * (perDay / 2) + i) })))
    const range = { from: '2025-01-10', to: '2025-01-12' }
    let estimating: StoreHarness
    beforeEach(async () => {
      estimating = await open({ exactVisitorDays: 100 })
      await estimating.store.applyScans([...days.slice(0, 450), scan(99_999, { scanned_at: T0 + 5 * DAY })])
      await estimating.store.applyScans(days.slice(450)) // a second batch adds to day 2's sketch
    })
    afterEach(() => estimating.cleanup())

    it('estimates them within 2 % in a breakdown and a summary, keeping scans exact', async () => {
      const breakdown = await estimating.store.breakdown('Code0001', range)
      expect(breakdown.total_scans).toBe(900)
      expect(breakdown.daily.map((d) => d.unique_scans)).toEqual([300, 300, 300])
      expect(Math.abs(breakdown.unique_scans - 600)).toBeLessThanOrEqual(12)
      const [summary] = await estimating.store.summary(['Code0001'], range)
      expect(summary!.total_scans).toBe(900)
      expect(Math.abs(summary!.unique_scans - 600)).toBeLessThanOrEqual(12)
    })

    it('answers the same totals in a summary as in the breakdown of each code, whichever way each is counted', async () => {
      // Code0002: a few visitors, counted exactly; Code0003: every scan in the range (all time);
      // Code0004: none in the range; Code0001: estimated (above).
      await estimating.store.applyScans([
        ...[0, 1, 2].map((i) => scan(20_000 + i, { code: 'Code0002', scanned_at: T0 + i * DAY, visitor_id: visitor(7) })),
        scan(20_010, { code: 'Code0003', scanned_at: T0 + DAY, visitor_id: visitor(8) }),
        scan(20_011, { code: 'Code0004', scanned_at: T0 + 9 * DAY, visitor_id: visitor(9) }),
      ])
      const codes = ['Code0001', 'Code0002', 'Code0003', 'Code0004', 'Unknown1']
      const fromBreakdowns = await Promise.all(codes.map(async (code) => {
        const { total_scans, unique_scans } = await estimating.store.breakdown(code, range)
        return { code, total_scans, unique_scans }
      }))
      expect(await estimating.store.summary(codes, range)).toEqual(fromBreakdowns)
      expect(fromBreakdowns.slice(1)).toEqual([
        { code: 'Code0002', total_scans: 3, unique_scans: 1 },
        { code: 'Code0003', total_scans: 1, unique_scans: 1 },
        { code: 'Code0004', total_scans: 0, unique_scans: 0 },
        { code: 'Unknown1', total_scans: 0, unique_scans: 0 },
      ])
    })

    it('answers the same estimate for a range whose days were stored by separate batches', async () => {
      const again = await open({ exactVisitorDays: 100 })
      try {
        for (let n = 0; n < days.length; n += 37) await again.store.applyScans(days.slice(n, n + 37))
        await again.store.applyScans([scan(99_999, { scanned_at: T0 + 5 * DAY })])
        expect((await again.store.breakdown('Code0001', range)).unique_scans).toBe((await estimating.store.breakdown('Code0001', range)).unique_scans)
      } finally {
        await again.cleanup()
      }
    })
  })

  exportContract(() => store)
  fallbackContract(() => store)

  it('answers its ping', async () => {
    expect(await store.ping()).toBe(true)
  })
}
