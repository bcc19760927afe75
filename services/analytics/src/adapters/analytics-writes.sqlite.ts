import type { Database } from 'bun:sqlite'
import { createTally } from '../aggregates'
import { addVisitor, visitorsByDay } from '../sketch'
import type { AnalyticsStoreOptions } from '../range-uniques'
import { dayOf } from '../days'
import type { AnalyticsStore, StoredScan } from '../ports'
import { daySketches } from './day-sketches.sqlite'
import { createKnownSet } from '../known-set'

// Raw scans are kept in export order: one B-tree keyed by (code, scanned_at, scan_id). A code's
// new scans append at the end of its range, and an export reads the range in order with no
// second lookup. The key is also what makes a scan stored once: a scan delivered again is the
// same event (the resolver fixes its code, time and id together), so it meets its own key and
// is ignored. The earlier layout (a rowid table with a unique scan_id index and a (code,
// scanned_at) index) wrote three B-trees per scan; migrateScans moves such a table over.
// The other tables are looked up by their key only: WITHOUT ROWID. Visitor tables make unique
// counting an insert-or-ignore; totals and per-day rows make reads independent of the number of
// scans. A day's visitor sketch (sketch.ts) lets a range of days estimate its distinct visitors
// without reading every visitor row of the range; only a day of more than SKETCH_MIN_VISITORS
// visitors has one stored.
const SCANS_COLUMNS = `code TEXT NOT NULL, scanned_at INTEGER NOT NULL, scan_id TEXT NOT NULL,
  country TEXT NOT NULL, device TEXT NOT NULL, os TEXT NOT NULL, browser TEXT NOT NULL, visitor_id TEXT NOT NULL,
  PRIMARY KEY (code, scanned_at, scan_id)`
const SCHEMA = `
CREATE TABLE IF NOT EXISTS scans (${SCANS_COLUMNS}) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS code_visitors (code TEXT NOT NULL, visitor_id TEXT NOT NULL, PRIMARY KEY (code, visitor_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS day_visitors (
  code TEXT NOT NULL, day TEXT NOT NULL, visitor_id TEXT NOT NULL, PRIMARY KEY (code, day, visitor_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS code_totals (code TEXT PRIMARY KEY, scans INTEGER NOT NULL, uniques INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS day_totals (
  code TEXT NOT NULL, day TEXT NOT NULL, scans INTEGER NOT NULL, uniques INTEGER NOT NULL, PRIMARY KEY (code, day)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS code_dims (
  code TEXT NOT NULL, dim TEXT NOT NULL, value TEXT NOT NULL, scans INTEGER NOT NULL, PRIMARY KEY (code, dim, value)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS day_dims (
  code TEXT NOT NULL, day TEXT NOT NULL, dim TEXT NOT NULL, value TEXT NOT NULL, scans INTEGER NOT NULL,
  PRIMARY KEY (code, day, dim, value)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS day_sketches (code TEXT NOT NULL, day TEXT NOT NULL, regs BLOB NOT NULL, PRIMARY KEY (code, day)) WITHOUT ROWID;`

const add = (table: string, keys: string[], counters: string[]) =>
  `INSERT INTO ${table} (${[...keys, ...counters].join(', ')}) VALUES (${[...keys, ...counters].map((c) => `$${c}`).join(', ')})
   ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${counters.map((c) => `${c} = ${c} + excluded.${c}`).join(', ')}`

/**
 * The write side of the SQLite AnalyticsStore: creates every table of the store if needed and
 * applies scan batches. Alone it is what the one-process ingestion Worker loads (no query code, no
 * contract), so it imports nothing that reads.
 */
export function createSqliteScanWrites(
  db: Database,
  options: Pick<AnalyticsStoreOptions, 'knownVisitors'> & {
    /** Told how long it took when a table of the earlier layout was moved (migrateScans); the store logs it, the Worker loads no logger. */
    onMoved?: (seconds: number) => void
  } = {},
): Pick<AnalyticsStore, 'applyScans'> {
  // One writer at a time creates or moves the tables: the one-process ingestion Worker opens the
  // same file as the service (after it: the service has moved the table by then), and analytics
  // replicas may share one.
  const started = performance.now()
  const moved = db.transaction(() => {
    const done = migrateScans(db)
    db.exec(SCHEMA)
    return done
  }).immediate()
  if (moved) options.onMoved?.(Math.round(performance.now() - started) / 1000)
  const insertScan = db.prepare<never, [string, number, string, string, string, string, string, string]>(
    'INSERT OR IGNORE INTO scans (code, scanned_at, scan_id, country, device, os, browser, visitor_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  )
  const insertVisitor = db.prepare<never, [string, string]>('INSERT OR IGNORE INTO code_visitors (code, visitor_id) VALUES (?, ?)')
  const insertDayVisitor = db.prepare<never, [string, string, string]>('INSERT OR IGNORE INTO day_visitors (code, day, visitor_id) VALUES (?, ?, ?)')
  const addCode = db.prepare(add('code_totals', ['code'], ['scans', 'uniques']))
  const addDay = db.prepare(add('day_totals', ['code', 'day'], ['scans', 'uniques']))
  const addCodeDim = db.prepare(add('code_dims', ['code', 'dim', 'value'], ['scans']))
  const addDayDim = db.prepare(add('day_dims', ['code', 'day', 'dim', 'value'], ['scans']))
  const sketchOfDay = daySketches(db)
  const saveSketch = db.prepare<never, [string, string, Uint8Array]>('INSERT OR REPLACE INTO day_sketches (code, day, regs) VALUES (?, ?, ?)')

  // (code, day, visitor) triples committed to both visitor tables (a day_visitors row is always
  // written with its code_visitors row): a scan of a returning visitor skips both inserts, two of
  // the five B-tree writes of a scan. This store is the database's only writer (the ingest lease,
  // or the one-process worker); triples are added only after their transaction committed.
  const known = createKnownSet(options.knownVisitors ?? 200_000)

  // One transaction per call: the raw scans and every aggregate commit together or not at all.
  const apply = db.transaction((scans: StoredScan[], metInBatch: Set<string>): number => {
    const tally = createTally()
    const newDayVisitors: { code: string; day: string; visitor_id: string }[] = []
    let fresh = 0
    for (const scan of scans) {
      const { scan_id, code, scanned_at, country, device, os, browser, visitor_id } = scan
      if (insertScan.run(code, scanned_at, scan_id, country, device, os, browser, visitor_id).changes === 0) continue
      fresh++
      const day = dayOf(scanned_at)
      const dayVisitor = `${code}\u0000${day}\u0000${visitor_id}`
      // Met earlier in this batch, or stored by an earlier one: not new again.
      if (metInBatch.has(dayVisitor) || known.has(dayVisitor)) {
        tally.add(scan, day, false, false)
        continue
      }
      metInBatch.add(dayVisitor)
      const newVisitor = insertVisitor.run(code, visitor_id).changes > 0
      const newDayVisitor = insertDayVisitor.run(code, day, visitor_id).changes > 0
      tally.add(scan, day, newVisitor, newDayVisitor)
      if (newDayVisitor) newDayVisitors.push({ code, day, visitor_id })
    }
    for (const { code, day, visitors } of visitorsByDay(newDayVisitors)) {
      // Built from the day's visitor rows, this batch's included, once they pass SKETCH_MIN_VISITORS.
      const sketch = sketchOfDay(code, day)
      if (!sketch) continue
      for (const visitor of visitors) addVisitor(sketch, visitor)
      saveSketch.run(code, day, sketch)
    }
    for (const row of tally.codes.values()) addCode.run(row)
    for (const row of tally.days.values()) addDay.run(row)
    for (const row of tally.codeDims.values()) addCodeDim.run(row)
    for (const row of tally.dayDims.values()) addDayDim.run(row)
    return fresh
  })

  return {
    async applyScans(scans) {
      if (scans.length === 0) return 0
      const metInBatch = new Set<string>()
      const fresh = apply(scans, metInBatch)
      for (const dayVisitor of metInBatch) known.add(dayVisitor)
      return fresh
    },
  }
}

/**
 * Moves a `scans` table of the earlier layout (a `seq` rowid, a unique scan_id index and a
 * (code, scanned_at) index: made before the table was keyed by export order) into the current
 * one, with every row. Runs inside the caller's transaction, so a failure leaves the old table
 * whole. It reads and writes every row once: 3.0 s for a million scans of 50 codes on the bench
 * machine (createSqliteAnalyticsStore logs how long it took, through onMoved). Export positions issued before the
 * move name a seq, not a scan id; the reads take such a position from the start of its
 * millisecond (analytics-reads.sqlite.ts).
 */
function migrateScans(db: Database): boolean {
  const columns = db.query<{ name: string }, []>('PRAGMA table_info(scans)').all()
  if (!columns.some((column) => column.name === 'seq')) return false
  db.exec(`CREATE TABLE scans_by_time (${SCANS_COLUMNS}) WITHOUT ROWID;
    INSERT OR IGNORE INTO scans_by_time (code, scanned_at, scan_id, country, device, os, browser, visitor_id)
      SELECT code, scanned_at, scan_id, country, device, os, browser, visitor_id FROM scans ORDER BY code, scanned_at, scan_id;
    DROP TABLE scans;
    ALTER TABLE scans_by_time RENAME TO scans;`)
  return true
}
