import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import type { RecordStore } from '../src/ports'
import { A, B, range, record } from './record-store.fixtures'
import { listContract } from './record-store.list.contract'

/** A fresh, empty store of one adapter, and how to dispose of it. */
export interface StoreHarness {
  store: RecordStore
  cleanup(): Promise<void>
}

/** The behaviour every RecordStore adapter must show; run once per reachable adapter. */
export function recordStoreContract(open: () => Promise<StoreHarness>) {
  let h: StoreHarness
  let store: RecordStore
  beforeEach(async () => {
    h = await open()
    store = h.store
  })
  afterEach(() => h.cleanup())

  describe('insertMany and get', () => {
    it('returns every stored field unchanged, style included', async () => {
      const shared = record(1, { style: { color: '#000', dots: { shape: 'round' }, $x: 1 }, status: 'draft', team_id: 't1' })
      await store.insertMany(B, [shared])
      expect(await store.get(B, shared.qr_id)).toEqual(shared)
    })

    it('returns null for a qr_id that does not exist', async () => {
      expect(await store.get(A, 'qr_missing')).toBeNull()
    })

    it('returns null for a record of another library', async () => {
      await store.insertMany(A, [record(1)])
      expect(await store.get(B, record(1).qr_id)).toBeNull()
    })

    it('stores nothing when two records of one batch share a qr_id', async () => {
      await expect(store.insertMany(A, [record(1), record(2), record(1, { name: 'again' })])).rejects.toThrow()
      expect(await store.get(A, record(1).qr_id)).toBeNull()
      expect(await store.get(A, record(2).qr_id)).toBeNull()
      expect((await store.list(A, { limit: 10 })).items).toEqual([])
    })

    it('stores nothing and keeps the older record when a qr_id is already taken', async () => {
      await store.insertMany(A, [record(5)])
      await expect(store.insertMany(B, [record(6), record(5, { name: 'clash' })])).rejects.toThrow()
      expect(await store.get(A, record(5).qr_id)).toEqual(record(5))
      expect((await store.list(B, { limit: 10 })).items).toEqual([])
    })
  })

  listContract(() => store)

  describe('update and delete', () => {
    it('changes only the given fields and sets updated_at', async () => {
      await store.insertMany(A, [record(1, { style: { a: 1 } })])
      const updated = await store.update(A, record(1).qr_id, { name: 'New', style: { b: 2 } }, 1_800_000_000)
      const expected = { ...record(1), name: 'New', style: { b: 2 }, updated_at: 1_800_000_000 }
      expect(updated).toEqual(expected)
      expect(await store.get(A, record(1).qr_id)).toEqual(expected)
    })

    it('changes url and status', async () => {
      await store.insertMany(B, [record(1, { status: 'draft', team_id: 't1' })])
      const updated = await store.update(B, record(1).qr_id, { url: 'https://new.example/', status: 'active' }, 1_800_000_000)
      expect(updated).toEqual({ ...record(1), team_id: 't1', url: 'https://new.example/', status: 'active', updated_at: 1_800_000_000 })
    })

    it('returns null and changes nothing for a record of another library', async () => {
      await store.insertMany(A, [record(1)])
      expect(await store.update(B, record(1).qr_id, { name: 'Stolen' }, 1_800_000_000)).toBeNull()
      expect(await store.get(A, record(1).qr_id)).toEqual(record(1))
    })

    it('deletes a record for good and answers false the second time', async () => {
      await store.insertMany(A, range(1, 2))
      expect(await store.delete(A, record(1).qr_id)).toBe(true)
      expect(await store.get(A, record(1).qr_id)).toBeNull()
      expect(await store.delete(A, record(1).qr_id)).toBe(false)
      expect((await store.list(A, { limit: 10 })).items).toEqual([record(2)])
    })

    it('answers false and keeps the record when deleting from another library', async () => {
      await store.insertMany(A, [record(1)])
      expect(await store.delete(B, record(1).qr_id)).toBe(false)
      expect(await store.get(A, record(1).qr_id)).toEqual(record(1))
    })

    it('answers its ping', async () => {
      expect(await store.ping()).toBe(true)
    })
  })
}
