import { describe } from 'bun:test'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAnalyticsStore } from '../src/adapters/analytics-store.sqlite'
import { analyticsStoreContract } from './analytics-store.contract'

describe('AnalyticsStore on SQLite', () => {
  analyticsStoreContract(async () => {
    const db = openSqlite(':memory:')
    return { store: createSqliteAnalyticsStore(db), cleanup: async () => db.close() }
  })
})
