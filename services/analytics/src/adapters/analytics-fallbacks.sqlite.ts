import type { Database } from 'bun:sqlite'
import { dayOf } from '../days'
import type { AnalyticsStore, FallbackScan } from '../ports'

// Fallback scans (README "Expiring and capped codes") stay out of every aggregate: their own
// table, unique on scan_id (so a redelivered batch counts once), counted by (code, day).
const SCHEMA = `
CREATE TABLE IF NOT EXISTS fallback_scans (scan_id TEXT PRIMARY KEY, code TEXT NOT NULL, day TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fallback_scans_code_day ON fallback_scans (code, day);`

/** The fallback part of the SQLite AnalyticsStore. */
export function createSqliteFallbacks(db: Database): Pick<AnalyticsStore, 'applyFallbacks' | 'fallbackCount'> {
  db.exec(SCHEMA)
  const insert = db.prepare<never, [string, string, string]>('INSERT OR IGNORE INTO fallback_scans (scan_id, code, day) VALUES (?, ?, ?)')
  const count = db.prepare<{ n: number }, { code: string; from: string | null; to: string | null }>(
    'SELECT count(*) AS n FROM fallback_scans WHERE code = $code AND ($from IS NULL OR day >= $from) AND ($to IS NULL OR day <= $to)',
  )
  const apply = db.transaction((scans: FallbackScan[]) => {
    let fresh = 0
    for (const { scan_id, code, scanned_at } of scans) fresh += insert.run(scan_id, code, dayOf(scanned_at)).changes
    return fresh
  })
  return {
    async applyFallbacks(scans) {
      return scans.length === 0 ? 0 : apply(scans)
    },
    async fallbackCount(code, range) {
      return count.get({ code, from: range.from, to: range.to })?.n ?? 0
    },
  }
}
