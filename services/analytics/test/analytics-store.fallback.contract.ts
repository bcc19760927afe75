import { describe, expect, it } from 'bun:test'
import { ALL_TIME } from '../src/days'
import type { AnalyticsStore } from '../src/ports'
import { DAY, T0 } from './fixtures'

const HISTORY_CODE = 'Code0001'

const fallback = (n: number, over: { code?: string; scanned_at?: number } = {}) =>
  ({ scan_id: `fallback-${n}`, code: HISTORY_CODE, scanned_at: T0, ...over })

/** Fallback scans (README "Expiring and capped codes"): kept apart from every aggregate. */
export function fallbackContract(store: () => AnalyticsStore) {
  describe('fallback scans', () => {
    it('counts each fallback scan once, per code, by day', async () => {
      expect(await store().applyFallbacks([fallback(1), fallback(2), fallback(3, { scanned_at: T0 + DAY }), fallback(4, { code: 'Other001' })])).toBe(4)
      expect(await store().applyFallbacks([fallback(1), fallback(3, { scanned_at: T0 + DAY })])).toBe(0)
      expect(await store().fallbackCount(HISTORY_CODE, ALL_TIME)).toBe(3)
      expect(await store().fallbackCount(HISTORY_CODE, { from: '2025-01-11', to: null })).toBe(1)
      expect(await store().fallbackCount(HISTORY_CODE, { from: null, to: '2025-01-10' })).toBe(2)
      expect(await store().fallbackCount('Other001', ALL_TIME)).toBe(1)
      expect(await store().fallbackCount('Nothing1', ALL_TIME)).toBe(0)
    })

    it('counts 150 fallback scans delivered again once', async () => {
      const many = Array.from({ length: 150 }, (_, n) => fallback(n))
      expect(await store().applyFallbacks(many)).toBe(150)
      expect(await store().applyFallbacks(many)).toBe(0)
      expect(await store().fallbackCount(HISTORY_CODE, ALL_TIME)).toBe(150)
    }, 30_000)

    it('leaves the scan totals and breakdown untouched', async () => {
      await store().applyFallbacks([fallback(1), fallback(2)])
      expect(await store().summary([HISTORY_CODE], ALL_TIME)).toEqual([{ code: HISTORY_CODE, total_scans: 0, unique_scans: 0 }])
      expect((await store().breakdown(HISTORY_CODE, ALL_TIME)).total_scans).toBe(0)
      expect((await store().exportPage(HISTORY_CODE, { range: ALL_TIME, limit: 10 })).items).toEqual([])
    })
  })
}
