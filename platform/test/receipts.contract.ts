import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { IDEMPOTENCY_TTL_S, type Receipt, ReceiptTaken, type ReceiptStore } from '@lr/proto'

/** A store that keeps receipts beside its records, reduced to what this contract needs. */
export interface ReceiptHarness {
  store: ReceiptStore
  /** Stores record number `n` (one insertMany), with the receipt in the same transaction. */
  insert(n: number, receipt?: Receipt): Promise<unknown>
  /** How many records the store holds. */
  count(): Promise<number>
  cleanup(): Promise<void>
}

const NOW = 1_800_000_000
const receipt = (over: Partial<Receipt> = {}): Receipt => ({
  scope: 'key_1', key: 'idem-1', fingerprint: 'f1', response: { created: [{ id: 1 }] }, created_at: NOW, ...over,
})

/** Idempotency receipts written atomically with records; run once per store adapter. */
export function receiptContract(open: () => Promise<ReceiptHarness>) {
  describe('idempotency receipts', () => {
    let h: ReceiptHarness
    beforeEach(async () => {
      h = await open()
    })
    afterEach(() => h.cleanup())

    it('finds a receipt stored with its records', async () => {
      await h.insert(1, receipt())
      expect(await h.store.findReceipt('key_1', 'idem-1', NOW - 10)).toEqual(receipt())
      expect(await h.count()).toBe(1)
    })

    it('returns null for another scope, another key, or a receipt older than `since`', async () => {
      await h.insert(1, receipt())
      expect(await h.store.findReceipt('key_2', 'idem-1', NOW - 10)).toBeNull()
      expect(await h.store.findReceipt('key_1', 'idem-2', NOW - 10)).toBeNull()
      expect(await h.store.findReceipt('key_1', 'idem-1', NOW + 1)).toBeNull()
    })

    it('refuses a second live receipt with ReceiptTaken and stores none of its records', async () => {
      await h.insert(1, receipt())
      await expect(h.insert(2, receipt({ fingerprint: 'f2' }))).rejects.toBeInstanceOf(ReceiptTaken)
      expect(await h.count()).toBe(1)
      expect((await h.store.findReceipt('key_1', 'idem-1', NOW - 10))?.fingerprint).toBe('f1')
    })

    it('lets the same key be used by another API key', async () => {
      await h.insert(1, receipt())
      await h.insert(2, receipt({ scope: 'key_2' }))
      expect(await h.count()).toBe(2)
    })

    it('replaces a receipt that has expired', async () => {
      await h.insert(1, receipt({ created_at: NOW - IDEMPOTENCY_TTL_S - 5 }))
      await h.insert(2, receipt({ fingerprint: 'f2' }))
      expect((await h.store.findReceipt('key_1', 'idem-1', NOW - 10))?.fingerprint).toBe('f2')
      expect(await h.count()).toBe(2)
    })
  })
}
