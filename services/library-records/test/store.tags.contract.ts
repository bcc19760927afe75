import { beforeEach, describe, expect, it } from 'bun:test'
import { AppError, type ListOptions, type ListSort } from '@lr/proto'
import type { RecordBase } from '../src/ports'
import { A, type AnyLibraryStore, B, idOf, type StoreFixture } from './store.fixture'

/** Tags, the list's filters (tags, search) and its sorts, with paging; part of libraryStoreContract. */
export function tagsContract<R extends RecordBase>(fixture: StoreFixture<R>, current: () => AnyLibraryStore<R>) {
  const { record } = fixture
  const id = (n: number) => idOf(fixture, record(n))
  const ids = (records: R[]) => records.map((r) => idOf(fixture, r))
  let store: AnyLibraryStore<R>
  beforeEach(() => {
    store = current()
  })

  /** Every page of a list query; `between` runs after each page. */
  async function walk(library: string, options: Omit<ListOptions, 'after'>, between?: (page: number) => Promise<void>) {
    const seen: string[] = []
    let after: string | undefined
    for (let page = 0; page < 100; page++) {
      const { items, next } = await store.list(library, { ...options, after })
      seen.push(...ids(items))
      if (next === null) return seen
      after = next
      await between?.(page)
    }
    throw new Error('paging did not end')
  }

  describe('tags', () => {
    it('stores the tags given and reads them back, [] when none', async () => {
      await store.insertMany(A, [record(1, { tags: ['print', 'summer-2025'] }), record(2)])
      expect((await store.get(A, id(1)))!.record.tags).toEqual(['print', 'summer-2025'])
      expect((await store.get(A, id(2)))!.record.tags).toEqual([])
    })

    it('replaces the tags on update, keeps them when the patch leaves them out', async () => {
      await store.insertMany(A, [record(1, { tags: ['a', 'b'] })])
      expect((await store.update(A, id(1), { name: 'Renamed' }, 1_800_000_000))!.tags).toEqual(['a', 'b'])
      expect((await store.update(A, id(1), { tags: ['c'] }, 1_800_000_001))!.tags).toEqual(['c'])
      expect((await store.get(A, id(1)))!.record).toEqual(record(1, { name: 'Renamed', tags: ['c'], updated_at: 1_800_000_001 }))
      expect((await store.update(A, id(1), { tags: [] }, 1_800_000_002))!.tags).toEqual([])
    })
  })

  describe('list filtered by tags', () => {
    beforeEach(async () => {
      await store.insertMany(A, [
        record(1, { tags: ['print', 'menu'] }),
        record(2, { tags: ['print'] }),
        record(3, { tags: ['menu'] }),
        record(4),
        record(5, { tags: ['menu', 'print', 'x'] }),
      ])
      await store.insertMany(B, [record(6, { tags: ['print', 'menu'] })])
    })

    it('keeps the library\'s records carrying the tag', async () => {
      expect(await store.list(A, { limit: 10, tags: ['print'] })).toEqual({ items: [record(1, { tags: ['print', 'menu'] }), record(2, { tags: ['print'] }), record(5, { tags: ['menu', 'print', 'x'] })], next: null })
    })

    it('keeps only records carrying every tag given', async () => {
      expect(ids((await store.list(A, { limit: 10, tags: ['menu', 'print'] })).items)).toEqual([id(1), id(5)])
      expect((await store.list(A, { limit: 10, tags: ['menu', 'nowhere'] })).items).toEqual([])
    })

    it('follows an update of the tags and leaves deleted records out', async () => {
      await store.update(A, id(4), { tags: ['print'] }, 1_800_000_000)
      await store.update(A, id(1), { tags: ['menu'] }, 1_800_000_000)
      await store.delete(A, id(2), 1_800_000_001)
      expect(ids((await store.list(A, { limit: 10, tags: ['print'] })).items)).toEqual([id(4), id(5)])
    })

    it('pages through the matching records exactly once', async () => {
      expect(await walk(A, { limit: 1, tags: ['print'] })).toEqual([id(1), id(2), id(5)])
      expect(await walk(A, { limit: 2, tags: ['menu'], sort: '-created_at' })).toEqual([id(5), id(3), id(1)])
    })

    it('combines with status', async () => {
      await store.update(A, id(5), { status: 'draft' }, 1_800_000_000)
      expect(ids((await store.list(A, { limit: 10, tags: ['print'], status: 'active' })).items)).toEqual([id(1), id(2)])
    })
  })

  describe('list filtered by search', () => {
    beforeEach(async () => {
      await store.insertMany(A, [
        record(1, { name: 'Summer Menu' }),
        record(2, { name: 'Flyer', [fixture.urlField]: 'https://shop.example/SUMMER-sale' }),
        record(3, { name: '100% off_now' }),
        record(4, { name: 'Crème brûlée' }),
        record(5, { name: 'a.b (c)' }),
      ])
      await store.insertMany(B, [record(6, { name: 'summer' })])
    })

    const search = async (text: string) => ids((await store.list(A, { limit: 10, search: text })).items)

    it('matches a substring of the name or of the URL, ASCII letters in either case (search comes lowercased)', async () => {
      expect(await search('summer')).toEqual([id(1), id(2)])
      expect(await search('menu')).toEqual([id(1)])
      expect(await search('shop.example/')).toEqual([id(2)])
    })

    it('matches other characters exactly: % _ . ( and non-ASCII letters are no patterns, and É is not é', async () => {
      expect(await search('%')).toEqual([id(3)])
      expect(await search('o_f')).toEqual([])
      expect(await search('off_')).toEqual([id(3)])
      expect(await search('a.b (c)')).toEqual([id(5)])
      expect(await search('a?b')).toEqual([])
      expect(await search('crème br')).toEqual([id(4)])
      expect(await search('crÈme')).toEqual([])
    })

    it('combines with tags and pages', async () => {
      await store.update(A, id(2), { tags: ['x'] }, 1_800_000_000)
      expect(ids((await store.list(A, { limit: 10, search: 'summer', tags: ['x'] })).items)).toEqual([id(2)])
      expect(await walk(A, { limit: 1, search: 'r' })).toEqual([id(1), id(2), id(4)])
    })
  })

  describe('list sorted', () => {
    const sorted = (sort: ListSort, limit = 2) => walk(A, { limit, sort })

    it('orders by created_at or updated_at either way, ties by insertion in the same direction', async () => {
      // created_at: 3 and 4 tie; updated_at: 1 is the newest, 2 and 5 tie.
      await store.insertMany(A, [
        record(1, { created_at: 100, updated_at: 900 }),
        record(2, { created_at: 200, updated_at: 300 }),
        record(3, { created_at: 300, updated_at: 400 }),
        record(4, { created_at: 300, updated_at: 500 }),
        record(5, { created_at: 50, updated_at: 300 }),
      ])
      await store.insertMany(B, [record(6, { created_at: 1 })])
      for (const limit of [1, 2, 10]) {
        expect(await sorted('created_at', limit)).toEqual([id(5), id(1), id(2), id(3), id(4)])
        expect(await sorted('-created_at', limit)).toEqual([id(4), id(3), id(2), id(1), id(5)])
        expect(await sorted('updated_at', limit)).toEqual([id(2), id(5), id(3), id(4), id(1)])
        expect(await sorted('-updated_at', limit)).toEqual([id(1), id(4), id(3), id(5), id(2)])
      }
    })

    it('orders by name by Unicode code point (case-sensitive), ties by insertion', async () => {
      const names = ['b', 'B', 'a', 'Ä', 'b', 'ab', '😀', 'ｚ']
      await store.insertMany(A, names.map((name, i) => record(i + 1, { name })))
      // Code points: B (42) < a < ab < b < b < Ä (c4) < ｚ (ff5a) < 😀 (1f600).
      const expected = [2, 3, 6, 1, 5, 4, 8, 7].map(id)
      for (const limit of [1, 3, 10]) expect(await sorted('name', limit)).toEqual(expected)
    })

    it('sees every record that stays put exactly once while records are created, changed and deleted between pages', async () => {
      await store.insertMany(A, [1, 2, 3, 4, 5, 6].map((n) => record(n, { name: `m${n}` })))
      let n = 100
      const seen = await walk(A, { limit: 2, sort: 'name' }, async (page) => {
        await store.insertMany(A, [record(n++, { name: `a${n}` }), record(n++, { name: `z${n}` })])
        if (page === 0) await store.delete(A, id(4), 1_800_000_000)
        if (page === 1) await store.update(A, id(6), { style: { x: 1 } }, 1_800_000_000)
      })
      // Names before the cursor (a...) are not seen; those after it (z...) are, once each.
      expect(seen).toEqual([id(1), id(2), id(3), id(5), id(6), ...[101, 103, 105].map(id)])
    })

    it('moves a record whose sort key changes mid-walk: seen again when it moves ahead, not again when it moves behind', async () => {
      await store.insertMany(A, [1, 2, 3, 4].map((n) => record(n, { updated_at: 100 + n })))
      // Ascending: 1 passed, then changed (now the newest) -> it comes again at the end.
      expect(await walk(A, { limit: 2, sort: 'updated_at' }, async (page) => {
        if (page === 0) await store.update(A, id(1), { name: 'again' }, 1_000)
      })).toEqual([id(1), id(2), id(3), id(4), id(1)])
      // Descending (1 is now the newest): 2 not yet reached, then changed (now the newest, behind the cursor) -> not seen.
      expect(await walk(A, { limit: 2, sort: '-updated_at' }, async (page) => {
        if (page === 0) await store.update(A, id(2), { name: 'moved' }, 2_000)
      })).toEqual([id(1), id(4), id(3)])
    })

    it('combines with status and search', async () => {
      await store.insertMany(A, [record(1, { name: 'q b' }), record(2, { name: 'q a', status: 'draft' }), record(3, { name: 'q c' }), record(4, { name: 'y' })])
      expect(ids((await store.list(A, { limit: 10, sort: 'name', search: 'q' })).items)).toEqual([id(2), id(1), id(3)])
      expect(ids((await store.list(A, { limit: 10, sort: 'name', search: 'q', status: 'active' })).items)).toEqual([id(1), id(3)])
    })

    it('refuses a position that is not one of this sort\'s with AppError bad_request', async () => {
      await store.insertMany(A, [record(1), record(2)])
      const plain = await store.list(A, { limit: 1 })
      for (const after of [plain.next!, 'zz', '1.xyz', '1.abc']) {
        const error = await store.list(A, { limit: 1, after, sort: 'name' }).then(() => null, (e: unknown) => e)
        expect(error).toBeInstanceOf(AppError)
        expect((error as AppError).code).toBe('bad_request')
      }
    })
  })
}
