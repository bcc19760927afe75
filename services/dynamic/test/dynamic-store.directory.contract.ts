import { describe, expect, it } from 'bun:test'
import { AppError } from '@lr/proto'
import type { DynamicStore } from '../src/ports'
import { A, B, range, record } from './dynamic-store.fixtures'

/** liveCodes and findCode (analytics' directory); part of dynamicStoreContract. */
export function directoryContract(store: () => DynamicStore) {
  describe('liveCodes and findCode', () => {
    it('pages through the live codes of the library, oldest first, without deleted ones', async () => {
      await store().insertMany(A, range(1, 5))
      await store().insertMany(B, [record(6)])
      await store().delete(A, record(2).code, 1_800_000_000)
      const first = await store().liveCodes(A, { limit: 2 })
      const second = await store().liveCodes(A, { after: first.next!, limit: 2 })
      expect([first.items, second]).toEqual([['code0001', 'code0003'], { items: ['code0004', 'code0005'], next: null }])
    })

    it('answers an empty page for a library without codes', async () => {
      expect(await store().liveCodes(A, { limit: 10 })).toEqual({ items: [], next: null })
    })

    it('rejects a position it could not have issued with bad_request', async () => {
      const error = await store().liveCodes(A, { after: 'zz', limit: 10 }).catch((e) => e)
      expect([error instanceof AppError, (error as AppError).code]).toEqual([true, 'bad_request'])
    })

    it('finds a code of the library, live or soft-deleted', async () => {
      await store().insertMany(A, range(1, 2))
      await store().delete(A, record(2).code, 1_800_000_000)
      expect(await store().findCode(A, record(1).code)).toEqual({ code: 'code0001', deleted: false })
      expect(await store().findCode(A, record(2).code)).toEqual({ code: 'code0002', deleted: true })
    })

    it('names the library of a code, live or soft-deleted, and null for one never issued (webhooks)', async () => {
      await store().insertMany(A, range(1, 2))
      await store().insertMany(B, [record(3)])
      await store().delete(A, record(2).code, 1_800_000_000)
      expect(await Promise.all(['code0001', 'code0002', 'code0003', 'code9999'].map((c) => store().libraryOfCode(c)))).toEqual([A, A, B, null])
    })

    it('answers null for a code of another library or never issued', async () => {
      await store().insertMany(A, [record(1)])
      expect(await store().findCode(B, record(1).code)).toBeNull()
      expect(await store().findCode(A, 'code9999')).toBeNull()
    })
  })
}
