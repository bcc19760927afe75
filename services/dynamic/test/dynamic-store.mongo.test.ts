import { describe } from 'bun:test'
import { connectMongo } from '@lr/platform/mongo'
import { createMongoDynamicStore } from '../src/adapters/dynamic-store.mongo'
import { receiptContract } from '@lr/platform/testing/receipts'
import { dynamicStoreContract } from './dynamic-store.contract'
import { A, record } from './dynamic-store.fixtures'

const url = process.env.MONGODB_URL

// Runs against a real server only; reported as skipped when MONGODB_URL is unset.
describe.skipIf(!url)('DynamicStore on MongoDB', () => {
  dynamicStoreContract(async () => {
    const base = await connectMongo(url!)
    const conn = base.useDb(`lr_dynamic_test_${crypto.randomUUID().slice(0, 8)}`, { useCache: false })
    const store = await createMongoDynamicStore(conn)
    return {
      store,
      async cleanup() {
        await conn.dropDatabase()
        await base.close()
      },
    }
  })
})

describe.skipIf(!url)('MongoDB dynamic store receipts', () => {
  receiptContract(async () => {
    const base = await connectMongo(url!)
    const conn = base.useDb(`lr_dynamic_receipts_test_${crypto.randomUUID().slice(0, 8)}`, { useCache: false })
    const store = await createMongoDynamicStore(conn)
    return {
      store,
      insert: (n, receipt) => store.insertMany(A, [record(n)], receipt),
      count: async () => (await store.list(A, { limit: 1000 })).items.length,
      async cleanup() {
        await conn.dropDatabase()
        await base.close()
      },
    }
  })
})
