import { describe } from 'bun:test'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteDynamicStore } from '../src/adapters/dynamic-store.sqlite'
import { receiptContract } from '@lr/platform/testing/receipts'
import { dynamicStoreContract } from './dynamic-store.contract'
import { A, record } from './dynamic-store.fixtures'

describe('DynamicStore on SQLite', () => {
  dynamicStoreContract(async () => {
    const db = openSqlite(':memory:')
    return { store: createSqliteDynamicStore(db), cleanup: async () => db.close() }
  })
})

describe('SQLite dynamic store receipts', () => {
  receiptContract(async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteDynamicStore(db)
    return {
      store,
      insert: (n, receipt) => store.insertMany(A, [record(n)], receipt),
      count: async () => (await store.list(A, { limit: 1000 })).items.length,
      cleanup: async () => db.close(),
    }
  })
})
