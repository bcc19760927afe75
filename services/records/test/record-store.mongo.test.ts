import { describe } from 'bun:test'
import { createMongoRecordStore } from '../src/adapters/record-store.mongo'
import { receiptContract } from '@lr/platform/testing/receipts'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../../test/harness/ferretdb'
import { recordStoreContract } from './record-store.contract'
import { A, record } from './record-store.fixtures'

// FerretDB started by the harness, or MONGODB_URL; see README "MongoDB compatibility".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo record store suites: ${skip}`)

describe.skipIf(Boolean(skip))('RecordStore on MongoDB', () => {
  const url = useMongoServer()
  recordStoreContract(async () => {
    const db = await freshDatabase(url(), 'lr_records_test')
    return { store: await createMongoRecordStore(db.conn), cleanup: db.cleanup }
  })

  describe('receipts', () => {
    receiptContract(async () => {
      const db = await freshDatabase(url(), 'lr_receipts_test')
      const store = await createMongoRecordStore(db.conn)
      return {
        store,
        insert: (n, receipt) => store.insertMany(A, [record(n)], receipt),
        count: async () => (await store.list(A, { limit: 1000 })).items.length,
        cleanup: db.cleanup,
      }
    })
  })
})
