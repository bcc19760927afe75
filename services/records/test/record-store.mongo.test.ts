import { describe } from 'bun:test'
import { connectMongo } from '@lr/platform/mongo'
import { createMongoRecordStore } from '../src/adapters/record-store.mongo'
import { receiptContract } from '@lr/platform/testing/receipts'
import { libraryStoreContract } from '@lr/library-records/testing/store-contract'
import { A, record, staticFixture } from './record-store.fixtures'

const url = process.env.MONGODB_URL

// Runs against a real server only; reported as skipped when MONGODB_URL is unset.
describe.skipIf(!url)('RecordStore on MongoDB', () => {
  libraryStoreContract(staticFixture, async () => {
    const base = await connectMongo(url!)
    const conn = base.useDb(`lr_records_test_${crypto.randomUUID().slice(0, 8)}`, { useCache: false })
    const store = await createMongoRecordStore(conn)
    return {
      store,
      async cleanup() {
        await conn.dropDatabase()
        await base.close()
      },
    }
  })
})

describe.skipIf(!url)('MongoDB record store receipts', () => {
  receiptContract(async () => {
    const base = await connectMongo(url!)
    const conn = base.useDb(`lr_receipts_test_${crypto.randomUUID().slice(0, 8)}`, { useCache: false })
    const store = await createMongoRecordStore(conn)
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
