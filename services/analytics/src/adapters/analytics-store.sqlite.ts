import type { Database } from 'bun:sqlite'
import type { AnalyticsStoreOptions } from '../range-uniques'
import type { AnalyticsStore } from '../ports'
import { log } from '@lr/platform/log'
import { createSqliteScanWrites, migrateScans } from './analytics-writes.sqlite'
import { createSqliteReads } from './analytics-reads.sqlite'
import { createSqliteFallbacks } from './analytics-fallbacks.sqlite'

/** An AnalyticsStore in an embedded SQLite database (see openSqlite); creates its tables if needed. */
export function createSqliteAnalyticsStore(db: Database, options: AnalyticsStoreOptions = {}): AnalyticsStore {
  // A database of the earlier raw-scans layout is moved over here, where it can be logged: it
  // holds the start for a few seconds per million scans (createSqliteScanWrites would do it too).
  const started = performance.now()
  if (db.transaction(() => migrateScans(db)).immediate())
    log().info({ seconds: Math.round(performance.now() - started) / 1000 }, 'analytics: raw scans moved to the layout keyed by (code, scanned_at, scan_id)')
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
