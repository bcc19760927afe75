import { beforeEach, describe, expect, it } from 'bun:test'
import { AppError } from '@lr/proto'
import type { DynamicStore } from '../src/ports'
import { A, B, codes, range, record } from './dynamic-store.fixtures'

/** Walks every page of a library; `between` runs after each page (e.g. to insert more). */
async function walk(store: DynamicStore, library: string, limit: number, between?: (page: number) => Promise<void>) {
  const seen: string[] = []
  let after: string | undefined
  for (let page = 0; page < 100; page++) {
    const { items, next } = await store.list(library, { limit, after })
    seen.push(...codes(items))
    if (next === null) return seen
    after = next
    await between?.(page)
  }
  throw new Error('paging did not end')
}

/** Paging and filtering of DynamicStore.list; part of dynamicStoreContract. */
export function listContract(current: () => DynamicStore) {
  let store: DynamicStore
  beforeEach(() => {
    store = current()
  })

  describe('list', () => {
    it('returns only the library\'s live records, oldest first, with no next on the last page', async () => {
      await store.insertMany(A, range(1, 3))
      await store.insertMany(B, range(4, 5))
      await store.insertMany(A, range(6, 7))
      await store.softDelete(A, record(7).code, 1_800_000_000)
      expect(await store.list(A, { limit: 10 })).toEqual({ items: [...range(1, 3), record(6)], next: null })
    })

    it('returns an empty last page for an empty library', async () => {
      expect(await store.list(A, { limit: 5 })).toEqual({ items: [], next: null })
    })

    it('returns every record exactly once across pages', async () => {
      await store.insertMany(A, range(1, 7))
      expect(await walk(store, A, 2)).toEqual(codes(range(1, 7)))
    })

    it('returns records inserted between pages exactly once, after the older ones', async () => {
      await store.insertMany(A, range(1, 5))
      let n = 100
      const seen = await walk(store, A, 2, async () => {
        if (n < 104) await store.insertMany(A, [record(n++), record(n++)])
      })
      expect(seen).toEqual(codes([...range(1, 5), ...range(100, 103)]))
    })

    it('skips records soft-deleted between pages', async () => {
      await store.insertMany(A, range(1, 5))
      const seen = await walk(store, A, 2, async (page) => {
        if (page === 0) await store.softDelete(A, record(4).code, 1_800_000_000)
      })
      expect(seen).toEqual(codes([record(1), record(2), record(3), record(5)]))
    })

    it('keeps only records updated at or after updatedSince', async () => {
      await store.insertMany(A, range(1, 5))
      const page = await store.list(A, { limit: 10, updatedSince: 1_700_000_003 })
      expect(codes(page.items)).toEqual(codes(range(3, 5)))
    })

    it('keeps only records of the given status, page by page', async () => {
      await store.insertMany(A, range(1, 6).map((r, i) => ({ ...r, status: i % 2 === 0 ? 'draft' : 'active' })))
      const first = await store.list(A, { limit: 2, status: 'draft' })
      expect(codes(first.items)).toEqual(['code0001', 'code0003'])
      const rest = await store.list(A, { limit: 2, status: 'draft', after: first.next! })
      expect([codes(rest.items), rest.next]).toEqual([['code0005'], null])
      expect(codes((await store.list(A, { limit: 10, status: 'active', updatedSince: 1_700_000_003 })).items)).toEqual(['code0004', 'code0006'])
    })

    it('rejects a position the store could not have issued with bad_request', async () => {
      const error = await store.list(A, { limit: 2, after: 'f'.repeat(40) }).catch((e) => e)
      expect(error).toBeInstanceOf(AppError)
      expect([error.code, error.message]).toEqual(['bad_request', 'cursor is not one this API issued'])
    })
  })
}
