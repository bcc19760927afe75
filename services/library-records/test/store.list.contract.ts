import { beforeEach, describe, expect, it } from 'bun:test'
import { AppError } from '@lr/proto'
import type { RecordBase } from '../src/ports'
import { A, type AnyLibraryStore, B, idOf, rangeOf, type StoreFixture } from './store.fixture'

/** Paging and filtering of LibraryStore.list; part of libraryStoreContract. */
export function listContract<R extends RecordBase>(fixture: StoreFixture<R>, current: () => AnyLibraryStore<R>) {
  const { record } = fixture
  const ids = (records: R[]) => records.map((r) => idOf(fixture, r))
  const range = (from: number, to: number) => rangeOf(fixture, from, to)
  let store: AnyLibraryStore<R>
  beforeEach(() => {
    store = current()
  })

  /** Walks every page of a library; `between` runs after each page (e.g. to insert more). */
  async function walk(library: string, limit: number, between?: (page: number) => Promise<void>) {
    const seen: string[] = []
    let after: string | undefined
    for (let page = 0; page < 100; page++) {
      const { items, next } = await store.list(library, { limit, after })
      seen.push(...ids(items))
      if (next === null) return seen
      after = next
      await between?.(page)
    }
    throw new Error('paging did not end')
  }

  describe('list', () => {
    it('returns only the library\'s live records, oldest first, with no next on the last page', async () => {
      await store.insertMany(A, range(1, 3))
      await store.insertMany(B, range(4, 5))
      await store.insertMany(A, range(6, 7))
      await store.delete(A, idOf(fixture, record(7)), 1_800_000_000)
      expect(await store.list(A, { limit: 10 })).toEqual({ items: [...range(1, 3), record(6)], next: null })
    })

    it('returns an empty last page for an empty library', async () => {
      expect(await store.list(A, { limit: 5 })).toEqual({ items: [], next: null })
    })

    it('returns every record exactly once across pages', async () => {
      await store.insertMany(A, range(1, 7))
      expect(await walk(A, 2)).toEqual(ids(range(1, 7)))
    })

    it('gives no next when the page ends exactly at the last record', async () => {
      await store.insertMany(A, range(1, 4))
      const first = await store.list(A, { limit: 2 })
      expect(first.next).not.toBeNull()
      expect(await store.list(A, { limit: 2, after: first.next! })).toEqual({ items: range(3, 4), next: null })
    })

    it('returns records inserted between pages exactly once, after the older ones', async () => {
      await store.insertMany(A, range(1, 5))
      let n = 100
      const seen = await walk(A, 2, async () => {
        if (n < 104) await store.insertMany(A, [record(n++), record(n++)])
      })
      expect(seen).toEqual(ids([...range(1, 5), ...range(100, 103)]))
    })

    it('skips records deleted between pages', async () => {
      await store.insertMany(A, range(1, 5))
      const seen = await walk(A, 2, async (page) => {
        if (page === 0) await store.delete(A, idOf(fixture, record(4)), 1_800_000_000)
      })
      expect(seen).toEqual(ids([record(1), record(2), record(3), record(5)]))
    })

    it('never reuses the position of a deleted newest record, so a later insert is not skipped', async () => {
      await store.insertMany(A, range(1, 3))
      const first = await store.list(A, { limit: 2 })
      // At record 3's time: record 4's is later, so it is stored as given (change-times.ts).
      await store.delete(A, idOf(fixture, record(2)), record(3).updated_at)
      await store.delete(A, idOf(fixture, record(3)), record(3).updated_at)
      await store.insertMany(A, [record(4)])
      expect(await store.list(A, { limit: 2, after: first.next! })).toEqual({ items: [record(4)], next: null })
    })

    it('keeps only records updated at or after updatedSince', async () => {
      await store.insertMany(A, range(1, 5))
      const page = await store.list(A, { limit: 10, updatedSince: 1_700_000_003 })
      expect(ids(page.items)).toEqual(ids(range(3, 5)))
    })

    it('pages through an updatedSince filter', async () => {
      await store.insertMany(A, range(1, 9))
      const first = await store.list(A, { limit: 2, updatedSince: 1_700_000_004 })
      expect(ids(first.items)).toEqual(ids(range(4, 5)))
      const rest = await store.list(A, { limit: 10, after: first.next!, updatedSince: 1_700_000_004 })
      expect(rest).toEqual({ items: range(6, 9), next: null })
    })

    it('keeps only records of the given status, page by page', async () => {
      await store.insertMany(A, range(1, 6).map((r, i) => ({ ...r, status: i % 2 === 0 ? 'draft' : 'active' })))
      const first = await store.list(A, { limit: 2, status: 'draft' })
      expect(ids(first.items)).toEqual(ids([record(1), record(3)]))
      const rest = await store.list(A, { limit: 2, status: 'draft', after: first.next! })
      expect([ids(rest.items), rest.next]).toEqual([ids([record(5)]), null])
      expect(ids((await store.list(A, { limit: 10, status: 'active', updatedSince: 1_700_000_003 })).items)).toEqual(ids([record(4), record(6)]))
    })

    it('exportPage, where the store has one, walks the same pages as list, style as the JSON text of the listed style', async () => {
      if (!store.exportPage) return expect(store.exportPage).toBeUndefined() // a store that holds style as a document: the export reads list
      await store.insertMany(A, [record(1, { tags: ['print', 'q4'] }), ...range(2, 5)])
      await store.insertMany(B, range(6, 6))
      await store.delete(A, idOf(fixture, record(2)), 1_800_000_000)
      // Every field an export column reads: the id and URL fields and those of every record.
      // The export form may carry more (Exported), which no column reads.
      const exportedFields = (r: object) =>
        Object.fromEntries([fixture.idField, fixture.urlField, 'name', 'style', 'tags', 'status', 'team_id', 'created_by', 'created_at', 'updated_at'].map((f) => [f, (r as Record<string, unknown>)[f]]))
      let after: string | undefined
      for (let page = 0; page < 10; page++) {
        const listed = await store.list(A, { limit: 2, after })
        const exported = await store.exportPage(A, { limit: 2, after })
        expect(exported.next).toBe(listed.next)
        expect(exported.items.map(exportedFields)).toEqual(listed.items.map((r) => exportedFields({ ...r, style: JSON.stringify(r.style) })))
        if (listed.next === null) return expect(page).toBe(1)
        after = listed.next
      }
      throw new Error('paging did not end')
    })

    it('rejects a position the store could not have issued with bad_request', async () => {
      const error = await store.list(A, { limit: 2, after: 'f'.repeat(40) }).catch((e) => e)
      expect(error).toBeInstanceOf(AppError)
      expect([error.code, error.message]).toEqual(['bad_request', 'cursor is not one this API issued'])
    })
  })
}
