import { describe } from 'bun:test'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAnalyticsStore } from '../src/adapters/analytics-store.sqlite'
import { analyticsStoreContract } from './analytics-store.contract'

describe('AnalyticsStore on SQLite', () => {
  analyticsStoreContract(async (options) => {
    const db = openSqlite(':memory:')
    return { store: createSqliteAnalyticsStore(db, options), cleanup: async () => db.close() }
  })
})
