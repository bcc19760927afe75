import { describe } from 'bun:test'
import { createMongoDynamicStore } from '../src/adapters/dynamic-store.mongo'
import { receiptContract } from '@lr/platform/testing/receipts'
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

  describe('receipts', () => {
    receiptContract(async () => {
      const db = await freshDatabase(url(), 'lr_dynamic_receipts_test')
      const store = await createMongoDynamicStore(db.conn)
      return {
        store,
        insert: (n, receipt) => store.insertMany(A, [record(n)], receipt),
        count: async () => (await store.list(A, { limit: 1000 })).items.length,
        cleanup: db.cleanup,
      }
    })
  })
})
