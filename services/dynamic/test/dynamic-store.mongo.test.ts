import { describe, expect, it } from 'bun:test'
import { createMongoDynamicStore } from '../src/adapters/dynamic-store.mongo'
import type { DynamicStore } from '../src/ports'
import { receiptContract } from '@lr/platform/testing/receipts'
import { concurrentPagingContract } from '@lr/platform/testing/concurrent-paging'
import { connectMongo } from '@lr/platform/mongo'
import { mongoReceipts, PENDING_GRACE_MS } from '@lr/platform/idempotency-mongo'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../../test/harness/ferretdb'
import { dynamicStoreContract } from './dynamic-store.contract'
import { A, record } from './dynamic-store.fixtures'

// FerretDB started by the harness, or MONGODB_URL; see README "MongoDB compatibility".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo dynamic store suites: ${skip}`)

describe.skipIf(Boolean(skip))('DynamicStore on MongoDB', () => {
  const url = useMongoServer()
  dynamicStoreContract(async () => {
    const db = await freshDatabase(url(), 'lr_dynamic_test')
    return { store: await createMongoDynamicStore(db.conn), cleanup: db.cleanup }
  })

  it('finishes a review whose writer died after its receipt: the receipt\'s answer when the change landed, none (the retry runs again) when it never did', async () => {
    const db = await freshDatabase(url(), 'lr_dynamic_receipted_test')
    try {
      const store = await createMongoDynamicStore(db.conn)
      const receipts = await mongoReceipts(db.conn)
      await store.insertMany(A, [record(1), record(2)])
      const at = Math.floor(Date.now() / 1000) - 10
      const receiptOf = (key: string) => ({ scope: 'key_1', key, fingerprint: 'f', response: { decided: key }, created_at: at })
      const dead = Date.now() - PENDING_GRACE_MS - 1000 // (the test's FerretDB runs on this machine: its clock is this one)
      const pendingChange = (id: string, marker: string) => ({ write: { in: 'dynamic_codes', change: { library: A, id, marker } }, at: dead })
      // Landed: the change carries the receipt's marker.
      const landed = `key_1\nidem-landed\n${at}`
      await receipts.write(receiptOf('idem-landed'), undefined, pendingChange(record(1).code, landed))
      await db.conn.collection('dynamic_codes').updateOne({ code: record(1).code }, { $set: { receipt_marker: landed, name: 'Changed' } })
      expect((await store.findReceipt('key_1', 'idem-landed', at - 60))?.response).toEqual({ decided: 'idem-landed' })
      expect((await receipts.findReceipt('key_1', 'idem-landed', at - 60))?.pending).toBeNull() // settled
      expect((await store.get(A, record(1).code))?.record).toEqual(record(1, { name: 'Changed' }))
      // Never landed: the receipt is taken back, so the retry runs the request again.
      await receipts.write(receiptOf('idem-lost'), undefined, pendingChange(record(2).code, `key_1\nidem-lost\n${at}`))
      expect(await store.findReceipt('key_1', 'idem-lost', at - 60)).toBeNull()
      expect(await receipts.findReceipt('key_1', 'idem-lost', at - 60)).toBeNull()
    } finally {
      await db.cleanup()
    }
  })

  it('reads a document stored before expiry as having none, and sets them by update', async () => {
    const db = await freshDatabase(url(), 'lr_dynamic_old_docs_test')
    try {
      const store = await createMongoDynamicStore(db.conn)
      await store.insertMany(A, [record(1)])
      await db.conn.collection('dynamic_codes').updateOne({ code: record(1).code }, { $unset: { expires_at: '', max_scans: '', fallback_url: '' } })
      expect(await db.conn.collection('dynamic_codes').countDocuments({ expires_at: { $exists: true } })).toBe(0)
      expect((await store.get(A, record(1).code))?.record).toEqual(record(1))
      expect(await store.resolve(record(1).code)).toEqual({ code: record(1).code, destination_url: record(1).destination_url, status: 'active', deleted: false })
      expect(await store.update(A, record(1).code, { max_scans: 9 }, 1_800_000_000)).toEqual(record(1, { max_scans: 9, updated_at: 1_800_000_000 }))
    } finally {
      await db.cleanup()
    }
  })

  it('tells the database server\'s time (LibraryStore.now), which the service stamps records by', async () => {
    const db = await freshDatabase(url(), 'lr_dynamic_clock_test')
    try {
      const store = await createMongoDynamicStore(db.conn)
      // FerretDB runs on this machine: its clock is this one, up to the reading's error.
      expect(Math.abs(store.now!() - Date.now())).toBeLessThan(100)
    } finally {
      await db.cleanup()
    }
  })

  describe('receipts', () => {
    receiptContract(async () => {
      const db = await freshDatabase(url(), 'lr_dynamic_receipts_test')
      const store = await createMongoDynamicStore(db.conn)
      return {
        store,
        insert: (n, receipt) => store.insertMany(A, [record(n)], receipt && (() => receipt)),
        count: async () => (await store.list(A, { limit: 1000 })).items.length,
        cleanup: db.cleanup,
      }
    })
  })
})

describe.skipIf(Boolean(skip))('DynamicStore on MongoDB, several replicas', () => {
  const url = useMongoServer()
  concurrentPagingContract(async (writers) => {
    const name = `lr_dynamic_paging_${crypto.randomUUID().slice(0, 8)}`
    // One connection per replica, as separate processes would have.
    const bases = await Promise.all(Array.from({ length: writers + 1 }, () => connectMongo(url())))
    const stores: DynamicStore[] = []
    for (const base of bases) stores.push(await createMongoDynamicStore(base.useDb(name, { useCache: false })))
    const reader = stores[writers]!
    return {
      insert: (w, ns) => stores[w]!.insertMany(A, ns.map((n) => record(n))),
      idsOf: (ns) => ns.map((n) => record(n).code),
      async page(after, limit) {
        const { items, next } = await reader.list(A, { after, limit })
        return { ids: items.map((r) => r.code), next }
      },
      async cleanup() {
        await bases[0]!.useDb(name, { useCache: false }).dropDatabase()
        await Promise.all(bases.map((base) => base.close()))
      },
    }
  })
})
