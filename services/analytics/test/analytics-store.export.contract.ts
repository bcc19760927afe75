import { describe, expect, it } from 'bun:test'
import { AppError } from '@lr/proto'
import { ALL_TIME } from '../src/days'
import type { AnalyticsStore, StoredScan } from '../src/ports'
import { DAY, scan, T0 } from './fixtures'

/** Walks every page of a code's export. */
async function walk(store: AnalyticsStore, code: string, limit: number, range = ALL_TIME, start?: string) {
  const pages: StoredScan[][] = []
  let after: string | undefined = start
  for (;;) {
    const page = await store.exportPage(code, { range, after, limit })
    pages.push(page.items)
    if (page.next === null) return pages
    after = page.next
  }
}

const ids = (scans: StoredScan[]) => scans.map((s) => s.scan_id)

/** exportPage: order, paging and ranges; part of analyticsStoreContract. */
export function exportContract(store: () => AnalyticsStore) {
  describe('exportPage', () => {
    it('answers every stored field of a scan', async () => {
      await store().applyScans([scan(1)])
      expect(await store().exportPage('Code0001', { range: ALL_TIME, limit: 10 })).toEqual({ items: [scan(1)], next: null })
    })

    it('orders by scan time, whatever the order of arrival', async () => {
      await store().applyScans([scan(3, { scanned_at: T0 + 7 }), scan(2, { scanned_at: T0 }), scan(1, { scanned_at: T0 + 5 })])
      await store().applyScans([scan(4, { scanned_at: T0 - 1 })])
      expect(ids((await store().exportPage('Code0001', { range: ALL_TIME, limit: 10 })).items)).toEqual([
        'scan-00004', 'scan-00002', 'scan-00001', 'scan-00003',
      ])
    })

    it('splits the scans into pages that hold each scan once, also scans of the same millisecond', async () => {
      await store().applyScans(Array.from({ length: 7 }, (_, i) => scan(i + 1, { scanned_at: T0 + (i % 3) })))
      const pages = await walk(store(), 'Code0001', 3)
      expect(pages.map((p) => p.length)).toEqual([3, 3, 1])
      const flat = pages.flat()
      expect(flat.map((s) => s.scanned_at - T0)).toEqual([0, 0, 0, 1, 1, 2, 2])
      expect(ids(flat).sort()).toEqual(['scan-00001', 'scan-00002', 'scan-00003', 'scan-00004', 'scan-00005', 'scan-00006', 'scan-00007'])
    })

    it('continues after a page with the scans stored meanwhile', async () => {
      await store().applyScans([scan(1), scan(2, { scanned_at: T0 + 1 })])
      const first = await store().exportPage('Code0001', { range: ALL_TIME, limit: 1 })
      await store().applyScans([scan(3, { scanned_at: T0 + 2 })])
      const rest = await walk(store(), 'Code0001', 10, ALL_TIME, first.next!)
      expect([ids(first.items), ids(rest.flat())]).toEqual([['scan-00001'], ['scan-00002', 'scan-00003']])
    })

    it('answers one page with next null when the scans fill it exactly', async () => {
      await store().applyScans([scan(1), scan(2)])
      expect(await walk(store(), 'Code0001', 2)).toEqual([[scan(1), scan(2)]])
    })

    it('keeps only the scans of the code', async () => {
      await store().applyScans([scan(1), scan(2, { code: 'Other001' })])
      expect(ids((await store().exportPage('Other001', { range: ALL_TIME, limit: 10 })).items)).toEqual(['scan-00002'])
    })

    it('keeps only the scans of the days of a range', async () => {
      await store().applyScans([scan(1, { scanned_at: T0 - DAY }), scan(2), scan(3, { scanned_at: T0 + DAY }), scan(4, { scanned_at: T0 + 2 * DAY })])
      const pages = await walk(store(), 'Code0001', 1, { from: '2025-01-10', to: '2025-01-11' })
      expect(ids(pages.flat())).toEqual(['scan-00002', 'scan-00003'])
    })

    it('answers an empty page for a code without scans', async () => {
      expect(await store().exportPage('Never001', { range: ALL_TIME, limit: 10 })).toEqual({ items: [], next: null })
    })

    for (const position of ['nonsense', '12', ':5', '1.5:3'])
      it(`rejects the position "${position}" it could not have issued with bad_request`, async () => {
        const error = await store().exportPage('Code0001', { range: ALL_TIME, after: position, limit: 10 }).catch((e) => e)
        expect(error).toBeInstanceOf(AppError)
        expect((error as AppError).code).toBe('bad_request')
      })
  })
}
