import { beforeEach, describe, expect, it } from 'bun:test'
import { AppError, type ListOptions, type Tombstone } from '@lr/proto'
import type { RecordBase } from '../src/ports'
import { A, type AnyLibraryStore, B, idOf, rangeOf, type StoreFixture } from './store.fixture'

const T = 1_800_000_000

/** The list of changes (LibraryStore.changes), tombstones and compare-and-set writes; part of libraryStoreContract. */
export function changesContract<R extends RecordBase>(fixture: StoreFixture<R>, current: () => AnyLibraryStore<R>) {
  const { record } = fixture
  const id = (n: number) => idOf(fixture, record(n))
  const keyOf = (item: R | Tombstone) => item[fixture.idField as keyof typeof item] as string
  const range = (from: number, to: number) => rangeOf(fixture, from, to)
  const tombstone = (n: number, at: number) => ({ [fixture.idField]: id(n), deleted_at: at, updated_at: at })
  let store: AnyLibraryStore<R>
  beforeEach(() => {
    store = current()
  })

  /** Every change page by page; `between` runs after each page. */
  async function walk(library: string, options: Omit<ListOptions, 'after'>, between?: (page: number) => Promise<void>) {
    const seen: (R | Tombstone)[] = []
    let after: string | undefined
    for (let page = 0; page < 100; page++) {
      const { items, next } = await store.changes(library, { ...options, after })
      seen.push(...items)
      if (next === null) return seen
      after = next
      await between?.(page)
    }
    throw new Error('paging did not end')
  }

  describe('changes', () => {
    it('lists records in the order of their last change, while list keeps insertion order', async () => {
      await store.insertMany(A, range(1, 3))
      await store.update(A, id(1), { name: 'Changed' }, T)
      expect((await walk(A, { limit: 2 })).map(keyOf)).toEqual([id(2), id(3), id(1)])
      expect((await store.list(A, { limit: 10 })).items.map(keyOf)).toEqual([id(1), id(2), id(3)])
    })

    it('brings a record changed after the reader passed it again, later, in its new state', async () => {
      await store.insertMany(A, range(1, 4))
      const seen = await walk(A, { limit: 2 }, async (page) => {
        if (page === 0) await store.update(A, id(1), { name: 'Again' }, T)
      })
      expect(seen.map(keyOf)).toEqual([id(1), id(2), id(3), id(4), id(1)])
      expect(seen.at(-1)).toEqual({ ...record(1), name: 'Again', updated_at: T })
    })

    it('hides deleted records unless includeDeleted, which gives tombstones at the position of the delete', async () => {
      await store.insertMany(A, range(1, 3))
      await store.insertMany(B, range(4, 4))
      await store.delete(A, id(1), T)
      expect(await store.changes(A, { limit: 10 })).toEqual({ items: range(2, 3), next: null })
      expect(await store.changes(A, { limit: 10, includeDeleted: true })).toEqual({ items: [...range(2, 3), tombstone(1, T)], next: null })
      expect((await store.list(A, { limit: 10 })).items).toEqual(range(2, 3))
    })

    it('keeps a tombstone by its delete time under updatedSince, whatever the status filter', async () => {
      await store.insertMany(A, range(1, 3).map((r) => ({ ...r, status: 'draft' as const })))
      await store.delete(A, id(1), T)
      await store.delete(A, id(2), T + 10)
      expect((await store.changes(A, { limit: 10, updatedSince: T + 5, includeDeleted: true })).items).toEqual([tombstone(2, T + 10)])
      expect((await store.changes(A, { limit: 10, status: 'active', includeDeleted: true })).items).toEqual([tombstone(1, T), tombstone(2, T + 10)])
      expect((await store.changes(A, { limit: 10, status: 'draft', includeDeleted: true })).items.map(keyOf)).toEqual([id(3), id(1), id(2)])
    })

    it('shows a record deleted after the reader passed it as a tombstone later in the walk', async () => {
      await store.insertMany(A, range(1, 4))
      const seen = await walk(A, { limit: 2, includeDeleted: true }, async (page) => {
        if (page === 0) await store.delete(A, id(2), T)
      })
      expect(seen).toEqual([record(1), record(2), record(3), record(4), tombstone(2, T)])
    })

    it('never shows another library\'s changes or tombstones', async () => {
      await store.insertMany(B, range(1, 2))
      await store.delete(B, id(1), T)
      expect(await store.changes(A, { limit: 10, includeDeleted: true })).toEqual({ items: [], next: null })
    })

    it('rejects a position the store could not have issued with bad_request', async () => {
      const error = await store.changes(A, { limit: 2, after: 'f'.repeat(40) }).catch((e) => e)
      expect(error).toBeInstanceOf(AppError)
      expect(error.code).toBe('bad_request')
    })
  })

  describe('compare-and-set writes', () => {
    it('updates while the record is still at the version read', async () => {
      await store.insertMany(A, [record(1)])
      const { rev } = (await store.get(A, id(1)))!
      expect(await store.update(A, id(1), { name: 'New' }, T, rev)).toEqual({ ...record(1), name: 'New', updated_at: T })
    })

    it('answers null and changes nothing when the record changed since it was read', async () => {
      await store.insertMany(A, [record(1, { style: { a: 1 } })])
      const read = (await store.get(A, id(1)))!
      await store.update(A, id(1), { style: { a: 2 } }, read.record.updated_at)
      const now = (await store.get(A, id(1)))!
      expect(await store.update(A, id(1), { name: 'Lost' }, T, read.rev)).toBeNull()
      expect(await store.delete(A, id(1), T, read.rev)).toBeNull()
      expect(await store.get(A, id(1))).toEqual(now)
      expect((await store.changes(A, { limit: 10 })).items).toEqual([now.record])
    })

    it('answers null when the record was changed and changed back since it was read', async () => {
      await store.insertMany(A, [record(1, { style: { a: 1 } })])
      const read = (await store.get(A, id(1)))!
      await store.update(A, id(1), { style: { a: 2 } }, read.record.updated_at)
      await store.update(A, id(1), { style: { a: 1 } }, read.record.updated_at)
      expect((await store.get(A, id(1)))!.record).toEqual(read.record)
      expect(await store.update(A, id(1), { name: 'Lost' }, T, read.rev)).toBeNull()
      expect((await store.get(A, id(1)))!.record).toEqual(read.record)
    })

    it('deletes while the record is still at the version read', async () => {
      await store.insertMany(A, [record(1)])
      const { rev } = (await store.get(A, id(1)))!
      expect(await store.delete(A, id(1), T, rev)).toEqual({ ...record(1), updated_at: T })
      expect(await store.get(A, id(1))).toBeNull()
    })
  })
}
