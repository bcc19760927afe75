import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { StoreConflict } from '@lr/proto'
import type { RecordBase } from '../src/ports'
import { A, type AnyLibraryStore, B, idOf, rangeOf, type StoreFixture, type StoreHarness } from './store.fixture'
import { changesContract } from './store.changes.contract'
import { listContract } from './store.list.contract'
import { tagsContract } from './store.tags.contract'

export { A, B, type StoreFixture, type StoreHarness } from './store.fixture'

/**
 * The behaviour every LibraryStore adapter of every kind must show; each kind's tests run it
 * once per reachable adapter (SQLite always, Mongo when MONGODB_URL is set).
 */
export function libraryStoreContract<R extends RecordBase>(fixture: StoreFixture<R>, open: () => Promise<StoreHarness<AnyLibraryStore<R>>>) {
  const { record } = fixture
  const id = (n: number) => idOf(fixture, record(n))
  const range = (from: number, to: number) => rangeOf(fixture, from, to)
  let h: StoreHarness<AnyLibraryStore<R>>
  let store: AnyLibraryStore<R>
  beforeEach(async () => {
    h = await open()
    store = h.store
  })
  afterEach(() => h.cleanup())

  /** The record `get` reads, without its version. */
  const read = async (library: string, id: string) => (await store.get(library, id))?.record ?? null

  const conflictOf = async (insert: Promise<unknown>) => {
    const error = await insert.then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(StoreConflict)
    return [(error as StoreConflict).key, (error as StoreConflict).value]
  }

  // README "Keeping another system in sync": a client asks for the changes since the largest
  // updated_at it saw. A write stamped before a later-stamped one may reach its change position
  // after it (a Mongo position block, the SQLite group commit): stamped no earlier, it is not skipped.
  describe('times in the order of the list of changes', () => {
    const T = 1_800_000_000
    it('stamps a write no earlier than the change stored before it, and answers it as stored', async () => {
      await store.insertMany(A, [record(1, { created_at: T, updated_at: T }), record(2, { created_at: T, updated_at: T })])
      expect((await store.update(A, id(1), { name: 'later' } as never, T + 10))?.updated_at).toBe(T + 10)
      // Stamped before the write above, written after it.
      const updated = await store.update(A, id(2), { name: 'earlier' } as never, T + 5)
      expect(updated?.updated_at).toBe(T + 10)
      expect((await read(A, id(2)))?.updated_at).toBe(T + 10)
      let receiptRecords: R[] | undefined
      const stored = await store.insertMany(A, [record(3, { created_at: T + 1, updated_at: T + 1 })], (records) => {
        receiptRecords = records
        return { scope: 'key_t', key: 'idem-t', fingerprint: 'f', response: { created: records }, created_at: T }
      })
      expect(stored.map((r) => [r.created_at, r.updated_at])).toEqual([[T + 10, T + 10]])
      expect(receiptRecords).toEqual(stored)
      expect(await read(A, id(3))).toEqual(stored[0]!)
      expect(await store.delete(A, id(1), T + 2)).not.toBeNull()
      const changes = (await store.changes(A, { limit: 100, includeDeleted: true })).items
      expect(changes.map((item) => (item as { updated_at?: number; deleted_at?: number }).updated_at ?? (item as { deleted_at: number }).deleted_at)).toEqual([T + 10, T + 10, T + 10])
      // A time later than every change is kept as given.
      expect((await store.update(A, id(2), { name: 'now' } as never, T + 20))?.updated_at).toBe(T + 20)
    })
  })

  describe('insertMany and get', () => {
    it('returns every stored field unchanged, style included', async () => {
      const shared = record(1, { style: { color: '#000', dots: { shape: 'round' }, $x: 1 }, status: 'draft', team_id: 't1' })
      await store.insertMany(B, [shared])
      expect(await read(B, id(1))).toEqual(shared)
    })

    it('returns null for an id that does not exist, or of another library', async () => {
      await store.insertMany(A, [record(1)])
      expect(await read(A, id(9999))).toBeNull()
      expect(await read(B, id(1))).toBeNull()
    })

    it('tells ids apart by case', async () => {
      await store.insertMany(A, [record(1, { [fixture.idField]: 'AbCdEfG1' })])
      expect(await read(A, 'abcdefg1')).toBeNull()
      await store.insertMany(A, [record(2, { [fixture.idField]: 'abcdefg1' })])
      expect((await read(A, 'abcdefg1'))!.name).toBe('Code 2')
    })

    it('rejects with StoreConflict on the id and stores nothing when two records of one batch share an id', async () => {
      const insert = store.insertMany(A, [record(1), record(2), record(1, { name: 'again' })])
      expect((await conflictOf(insert))[0]).toBe(fixture.idField)
      expect(await read(A, id(2))).toBeNull()
      expect((await store.list(A, { limit: 10 })).items).toEqual([])
    })

    it('rejects with StoreConflict, stores nothing and keeps the older record when an id is taken in another library', async () => {
      await store.insertMany(A, [record(5)])
      expect((await conflictOf(store.insertMany(B, [record(6), record(5, { name: 'clash' })])))[0]).toBe(fixture.idField)
      expect(await read(A, id(5))).toEqual(record(5))
      expect((await store.list(B, { limit: 10 })).items).toEqual([])
    })
  })

  listContract(fixture, () => store)
  changesContract(fixture, () => store)
  tagsContract(fixture, () => store)

  describe('update', () => {
    it('changes only the given fields and sets updated_at', async () => {
      await store.insertMany(A, [record(1, { style: { a: 1 } })])
      const updated = await store.update(A, id(1), { name: 'New', style: { b: 2 } }, 1_800_000_000)
      const expected = { ...record(1), name: 'New', style: { b: 2 }, updated_at: 1_800_000_000 }
      expect(updated).toEqual(expected)
      expect(await read(A, id(1))).toEqual(expected)
    })

    it('changes the URL and the status', async () => {
      await store.insertMany(B, [record(1, { status: 'draft', team_id: 't1' })])
      const updated = await store.update(B, id(1), { [fixture.urlField]: 'https://new.example/', status: 'active' }, 1_800_000_000)
      expect(updated).toEqual({ ...record(1), team_id: 't1', [fixture.urlField]: 'https://new.example/', status: 'active', updated_at: 1_800_000_000 })
    })

    it('returns null and changes nothing for a record of another library', async () => {
      await store.insertMany(A, [record(1)])
      expect(await store.update(B, id(1), { name: 'Stolen' }, 1_800_000_000)).toBeNull()
      expect(await read(A, id(1))).toEqual(record(1))
    })

    it('returns null for a deleted record', async () => {
      await store.insertMany(A, [record(1)])
      await store.delete(A, id(1), 1_800_000_000)
      expect(await store.update(A, id(1), { name: 'Back?' }, 1_800_000_001)).toBeNull()
    })
  })

  describe('delete', () => {
    it('returns the record once, then hides it from get and list, and answers null the second time', async () => {
      await store.insertMany(A, range(1, 2))
      const left = { ...record(1), updated_at: 1_800_000_000 }
      expect(await store.delete(A, id(1), 1_800_000_000)).toEqual(left)
      expect(await read(A, id(1))).toBeNull()
      expect(await store.delete(A, id(1), 1_800_000_001)).toBeNull()
      expect((await store.list(A, { limit: 10 })).items).toEqual([record(2)])
    })

    it('answers null and keeps the record when deleting from another library', async () => {
      await store.insertMany(A, [record(1)])
      expect(await store.delete(B, id(1), 1_800_000_000)).toBeNull()
      expect(await read(A, id(1))).toEqual(record(1))
    })

    it('never accepts the id of a deleted record again', async () => {
      await store.insertMany(A, [record(1)])
      await store.delete(A, id(1), 1_800_000_000)
      expect((await conflictOf(store.insertMany(A, [record(1, { name: 'reborn' })])))[0]).toBe(fixture.idField)
    })

    it('answers its ping', async () => {
      expect(await store.ping()).toBe(true)
    })
  })
}
