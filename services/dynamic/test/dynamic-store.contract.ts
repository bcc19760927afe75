import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { CodeTakenError, type DynamicStore, type StoredDynamic } from '../src/ports'
import { directoryContract } from './dynamic-store.directory.contract'
import { listContract } from './dynamic-store.list.contract'
import { A, B, codes, range, record } from './dynamic-store.fixtures'

/** A fresh, empty store of one adapter, and how to dispose of it. */
export interface StoreHarness {
  store: DynamicStore
  cleanup(): Promise<void>
}


/** The behaviour every DynamicStore adapter must show; run once per reachable adapter. */
export function dynamicStoreContract(open: () => Promise<StoreHarness>) {
  let h: StoreHarness
  let store: DynamicStore
  beforeEach(async () => {
    h = await open()
    store = h.store
  })
  afterEach(() => h.cleanup())

  describe('insertMany and get', () => {
    it('returns every stored field unchanged, style included', async () => {
      const shared = record(1, { style: { color: '#000', dots: { shape: 'round' }, $x: 1 }, status: 'draft', team_id: 't1' })
      await store.insertMany(B, [shared])
      expect(await store.get(B, shared.code)).toEqual(shared)
    })

    it('returns null for a code that does not exist, or of another library', async () => {
      await store.insertMany(A, [record(1)])
      expect(await store.get(A, 'code9999')).toBeNull()
      expect(await store.get(B, record(1).code)).toBeNull()
    })

    it('tells codes apart by case', async () => {
      await store.insertMany(A, [record(1, { code: 'AbCdEfG1' })])
      expect(await store.get(A, 'abcdefg1')).toBeNull()
      await store.insertMany(A, [record(2, { code: 'abcdefg1' })])
      expect((await store.get(A, 'abcdefg1'))!.name).toBe('Code 2')
    })

    it('rejects with CodeTakenError and stores nothing when two records of one batch share a code', async () => {
      const error = await store.insertMany(A, [record(1), record(2), record(1, { name: 'again' })]).catch((e) => e)
      expect(error).toBeInstanceOf(CodeTakenError)
      expect(await store.get(A, record(1).code)).toBeNull()
      expect((await store.list(A, { limit: 10 })).items).toEqual([])
    })

    it('rejects with CodeTakenError, stores nothing and keeps the older record when a code is taken in another library', async () => {
      await store.insertMany(A, [record(5)])
      const error = await store.insertMany(B, [record(6), record(5, { name: 'clash' })]).catch((e) => e)
      expect(error).toBeInstanceOf(CodeTakenError)
      expect(await store.get(A, record(5).code)).toEqual(record(5))
      expect((await store.list(B, { limit: 10 })).items).toEqual([])
    })

    it('never accepts the code of a soft-deleted record again', async () => {
      await store.insertMany(A, [record(1)])
      await store.softDelete(A, record(1).code, 1_800_000_000)
      expect(await store.insertMany(A, [record(1, { name: 'reborn' })]).catch((e) => e)).toBeInstanceOf(CodeTakenError)
      expect(await store.resolve(record(1).code)).toEqual({ code: record(1).code, destination_url: record(1).destination_url, status: 'active', deleted: true })
    })
  })

  listContract(() => store)
  directoryContract(() => store)

  describe('update', () => {
    it('changes only the given fields and sets updated_at', async () => {
      await store.insertMany(A, [record(1, { style: { a: 1 } })])
      const updated = await store.update(A, record(1).code, { name: 'New', style: { b: 2 } }, 1_800_000_000)
      const expected = { ...record(1), name: 'New', style: { b: 2 }, updated_at: 1_800_000_000 }
      expect(updated).toEqual(expected)
      expect(await store.get(A, record(1).code)).toEqual(expected)
    })

    it('changes destination_url and status', async () => {
      await store.insertMany(B, [record(1, { status: 'draft', team_id: 't1' })])
      const updated = await store.update(B, record(1).code, { destination_url: 'https://new.example/', status: 'active' }, 1_800_000_000)
      expect(updated).toEqual({ ...record(1), team_id: 't1', destination_url: 'https://new.example/', status: 'active', updated_at: 1_800_000_000 })
    })

    it('returns null and changes nothing for a record of another library', async () => {
      await store.insertMany(A, [record(1)])
      expect(await store.update(B, record(1).code, { name: 'Stolen' }, 1_800_000_000)).toBeNull()
      expect(await store.get(A, record(1).code)).toEqual(record(1))
    })

    it('returns null for a soft-deleted record', async () => {
      await store.insertMany(A, [record(1)])
      await store.softDelete(A, record(1).code, 1_800_000_000)
      expect(await store.update(A, record(1).code, { name: 'Back?' }, 1_800_000_001)).toBeNull()
    })
  })

  describe('softDelete and resolve', () => {
    it('returns the record once, then hides it from get and list, and answers null the second time', async () => {
      await store.insertMany(A, range(1, 2))
      expect(await store.softDelete(A, record(1).code, 1_800_000_000)).toEqual({ ...record(1), updated_at: 1_800_000_000 })
      expect(await store.get(A, record(1).code)).toBeNull()
      expect(await store.softDelete(A, record(1).code, 1_800_000_001)).toBeNull()
      expect((await store.list(A, { limit: 10 })).items).toEqual([record(2)])
    })

    it('answers null and keeps the record when deleting from another library', async () => {
      await store.insertMany(A, [record(1)])
      expect(await store.softDelete(B, record(1).code, 1_800_000_000)).toBeNull()
      expect(await store.get(A, record(1).code)).toEqual(record(1))
    })

    it('resolves a code of any library with its destination and status', async () => {
      await store.insertMany(A, [record(1)])
      await store.insertMany(B, [record(2, { status: 'draft', team_id: 't1' })])
      expect(await store.resolve(record(1).code)).toEqual({ code: record(1).code, destination_url: 'https://example.com/1', status: 'active', deleted: false })
      expect(await store.resolve(record(2).code)).toEqual({ code: record(2).code, destination_url: 'https://example.com/2', status: 'draft', deleted: false })
    })

    it('resolves a code never issued to null', async () => {
      expect(await store.resolve('code0404')).toBeNull()
    })

    it('answers its ping', async () => {
      expect(await store.ping()).toBe(true)
    })
  })
}
