import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { libraryStoreContract, type StoreHarness } from '@lr/library-records/testing/store-contract'
import type { DynamicStore } from '../src/ports'
import { directoryContract } from './dynamic-store.directory.contract'
import { reviewContract } from './dynamic-store.review.contract'
import { expiryContract } from './dynamic-store.expiry.contract'
import { A, B, dynamicFixture, record } from './dynamic-store.fixtures'

/**
 * The behaviour every DynamicStore adapter must show: the shared library-store contract, plus
 * the resolver's lookup and analytics' directory. Run once per reachable adapter.
 */
export function dynamicStoreContract(open: () => Promise<StoreHarness<DynamicStore>>) {
  describe('as a library store', () => libraryStoreContract(dynamicFixture, open))

  describe('resolve and directory', () => {
    let h: StoreHarness<DynamicStore>
    let store: DynamicStore
    beforeEach(async () => {
      h = await open()
      store = h.store
    })
    afterEach(() => h.cleanup())

    it('resolves a code of any library with its destination and status', async () => {
      await store.insertMany(A, [record(1)])
      await store.insertMany(B, [record(2, { status: 'draft', team_id: 't1' })])
      expect(await store.resolve(record(1).code)).toEqual({ code: record(1).code, destination_url: 'https://example.com/1', status: 'active', deleted: false })
      expect(await store.resolve(record(2).code)).toEqual({ code: record(2).code, destination_url: 'https://example.com/2', status: 'draft', deleted: false })
    })

    it('resolves a soft-deleted code as deleted', async () => {
      await store.insertMany(A, [record(1)])
      await store.delete(A, record(1).code, 1_800_000_000)
      expect(await store.resolve(record(1).code)).toEqual({ code: record(1).code, destination_url: record(1).destination_url, status: 'active', deleted: true })
    })

    it('reads records with their fields in one order (the ETag hashes the JSON), own fields only when set, in every read', async () => {
      const rules = [{ os: 'ios' as const, destination_url: 'https://example.com/ios' }]
      await store.insertMany(A, [record(1), record(2, { redirect_rules: rules, expires_at: 1_900_000_000, max_scans: 5, fallback_url: 'https://example.com/over' })])
      const base = ['code', 'destination_url', 'name', 'style', 'status', 'team_id', 'created_by', 'created_at', 'updated_at', 'tags']
      const own = ['redirect_rules', 'expires_at', 'max_scans', 'fallback_url']
      const reads = async (code: string) => [(await store.get(A, code))!.record, (await store.list(A, { limit: 10 })).items.find((r) => r.code === code)!]
      for (const read of await reads(record(1).code)) expect(Object.keys(read).sort()).toEqual([...base].sort())
      const [one, listed] = await reads(record(2).code)
      expect(Object.keys(one!)).toEqual(Object.keys(listed!))
      expect(Object.keys(one!).sort()).toEqual([...base, ...own].sort())
      expect(one).toEqual(record(2, { redirect_rules: rules, expires_at: 1_900_000_000, max_scans: 5, fallback_url: 'https://example.com/over' }))
    })

    it('resolves a code never issued to null', async () => {
      expect(await store.resolve('code0404')).toBeNull()
    })

    directoryContract(() => store)
    reviewContract(() => store)
    expiryContract(() => store)
  })
}
