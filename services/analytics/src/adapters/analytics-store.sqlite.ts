import type { Database } from 'bun:sqlite'
import type { AnalyticsStoreOptions } from '../range-uniques'
import type { AnalyticsStore } from '../ports'
import { log } from '@lr/platform/log'
import { createSqliteScanWrites } from './analytics-writes.sqlite'
import { createSqliteReads } from './analytics-reads.sqlite'
import { createSqliteFallbacks } from './analytics-fallbacks.sqlite'

/** An AnalyticsStore in an embedded SQLite database (see openSqlite); creates its tables if needed. */
export function createSqliteAnalyticsStore(db: Database, options: AnalyticsStoreOptions = {}): AnalyticsStore {
  // A database of the earlier raw-scans layout is moved over when the writes open it: it holds
  // the start for a few seconds per million scans, so it is logged.
  const onMoved = (seconds: number) => log().info({ seconds }, 'analytics: raw scans moved to the layout keyed by (code, scanned_at, scan_id)')
  return {
    ...createSqliteScanWrites(db, { ...options, onMoved }), // first: it creates the tables the reads prepare against
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
