import type { Database } from 'bun:sqlite'
import { createTally } from '../aggregates'
import { addVisitor, visitorsByDay } from '../sketch'
import type { AnalyticsStoreOptions } from '../range-uniques'
import { dayOf } from '../days'
import type { AnalyticsStore, StoredScan } from '../ports'
import { daySketches } from './day-sketches.sqlite'
import { createKnownSet } from '../known-set'

// Raw scans in a rowid table (appends are cheap; a random scan_id as the key would make every
// insert a page split), unique on scan_id; the time index carries the rowid, so export order is
// (scanned_at, seq). The other tables are looked up by their key only: WITHOUT ROWID. Visitor
// tables make unique counting an insert-or-ignore; totals and per-day rows make reads
// independent of the number of scans. A day's visitor sketch (sketch.ts) lets a range of days
// estimate its distinct visitors without reading every visitor row of the range.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS scans (
  seq INTEGER PRIMARY KEY, scan_id TEXT NOT NULL UNIQUE, code TEXT NOT NULL, scanned_at INTEGER NOT NULL,
  country TEXT NOT NULL, device TEXT NOT NULL, os TEXT NOT NULL, browser TEXT NOT NULL, visitor_id TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS scans_code_time ON scans (code, scanned_at);
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
export function createSqliteScanWrites(db: Database, options: Pick<AnalyticsStoreOptions, 'knownVisitors'> = {}): Pick<AnalyticsStore, 'applyScans'> {
  db.exec(SCHEMA)
  const insertScan = db.prepare<never, [string, string, number, string, string, string, string, string]>(
    'INSERT OR IGNORE INTO scans (scan_id, code, scanned_at, country, device, os, browser, visitor_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
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
      if (insertScan.run(scan_id, code, scanned_at, country, device, os, browser, visitor_id).changes === 0) continue
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
      const sketch = sketchOfDay(code, day)
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
