import { describe } from 'bun:test'
import { libraryStoreContract } from '@lr/library-records/testing/store-contract'
import { openSqlite } from '@lr/platform/sqlite'
import { receiptContract } from '@lr/platform/testing/receipts'
import { createSqliteRecordStore } from '../src/adapters/record-store.sqlite'
import { A, record, staticFixture } from './record-store.fixtures'

describe('RecordStore on SQLite', () => {
  libraryStoreContract(staticFixture, async () => {
    const db = openSqlite(':memory:')
    return { store: createSqliteRecordStore(db), cleanup: async () => db.close() }
  })
})

describe('SQLite record store receipts', () => {
  receiptContract(async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteRecordStore(db)
    return {
      store,
      insert: (n, receipt) => store.insertMany(A, [record(n)], receipt),
      count: async () => (await store.list(A, { limit: 1000 })).items.length,
      cleanup: async () => db.close(),
    }
  })
})
