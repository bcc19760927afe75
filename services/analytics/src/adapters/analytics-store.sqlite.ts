import type { Database } from 'bun:sqlite'
import type { AnalyticsStoreOptions } from '../range-uniques'
import type { AnalyticsStore } from '../ports'
import { createSqliteScanWrites } from './analytics-writes.sqlite'
import { createSqliteReads } from './analytics-reads.sqlite'
import { createSqliteFallbacks } from './analytics-fallbacks.sqlite'

/** An AnalyticsStore in an embedded SQLite database (see openSqlite); creates its tables if needed. */
export function createSqliteAnalyticsStore(db: Database, options: AnalyticsStoreOptions = {}): AnalyticsStore {
  return {
    ...createSqliteScanWrites(db, options), // first: it creates the tables the reads prepare against
    ...createSqliteReads(db, options),
    ...createSqliteFallbacks(db),
    async ping() {
      try {
        return db.query('SELECT 1 AS ok').get() !== null
      } catch {
        return false
      }
    },
  }
}
