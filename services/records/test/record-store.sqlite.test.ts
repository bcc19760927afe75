import { describe } from 'bun:test'
import { openSqlite } from '@lr/proto/sqlite'
import { createSqliteRecordStore } from '../src/adapters/record-store.sqlite'
import { recordStoreContract } from './record-store.contract'

describe('RecordStore on SQLite', () => {
  recordStoreContract(async () => {
    const db = openSqlite(':memory:')
    return { store: createSqliteRecordStore(db), cleanup: async () => db.close() }
  })
})
