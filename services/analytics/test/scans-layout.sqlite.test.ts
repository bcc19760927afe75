import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Database } from 'bun:sqlite'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAnalyticsStore } from '../src/adapters/analytics-store.sqlite'
import { createSqliteScanWrites } from '../src/adapters/analytics-writes.sqlite'
import { ALL_TIME } from '../src/days'
import type { AnalyticsStore, StoredScan } from '../src/ports'
import { scan, T0 } from './fixtures'

// The raw scans table as every release before the export-ordered key made it, word for word.
const EARLIER_SCANS = `
CREATE TABLE scans (
  seq INTEGER PRIMARY KEY, scan_id TEXT NOT NULL UNIQUE, code TEXT NOT NULL, scanned_at INTEGER NOT NULL,
  country TEXT NOT NULL, device TEXT NOT NULL, os TEXT NOT NULL, browser TEXT NOT NULL, visitor_id TEXT NOT NULL
);
CREATE INDEX scans_code_time ON scans (code, scanned_at);`

function earlierDatabase(path: string, scans: StoredScan[]): Database {
  const db = openSqlite(path)
  db.exec(EARLIER_SCANS)
  const insert = db.prepare('INSERT INTO scans (scan_id, code, scanned_at, country, device, os, browser, visitor_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
  for (const s of scans) insert.run(s.scan_id, s.code, s.scanned_at, s.country, s.device, s.os, s.browser, s.visitor_id)
  return db
}

async function exported(store: AnalyticsStore, code = 'Code0001'): Promise<StoredScan[]> {
  const all: StoredScan[] = []
  for (let after: string | undefined; ; ) {
    const page = await store.exportPage(code, { range: ALL_TIME, after, limit: 2 })
    all.push(...page.items)
    if (page.next === null) return all
    after = page.next
  }
}

const objects = (db: Database) =>
  db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE tbl_name = 'scans' ORDER BY name").all().map((row) => row.name)

describe('SQLite analytics store: the raw scans table', () => {
  const dirs: string[] = []
  const fileIn = () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-scans-layout-'))
    dirs.push(dir)
    return join(dir, 'analytics.sqlite')
  }
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  // Arrival order differs from time order, and two scans share a millisecond.
  const stored = [scan(3, { scanned_at: T0 + 5 }), scan(1, { scanned_at: T0 }), scan(2, { scanned_at: T0 }), scan(4, { code: 'Other001' })]

  it('is one table keyed by export order: no second index to write per scan', () => {
    const db = openSqlite(':memory:')
    createSqliteScanWrites(db)
    expect(objects(db)).toEqual(['scans'])
    const [table] = db.query<{ sql: string }, []>("SELECT sql FROM sqlite_master WHERE name = 'scans'").all()
    expect(table!.sql).toContain('PRIMARY KEY (code, scanned_at, scan_id)')
    expect(table!.sql).toContain('WITHOUT ROWID')
  })

  it('moves a table of the earlier layout over with every scan, in export order', async () => {
    const db = earlierDatabase(fileIn(), stored)
    const store = createSqliteAnalyticsStore(db)
    expect(objects(db)).toEqual(['scans'])
    expect((await exported(store)).map((s) => s.scan_id)).toEqual(['scan-00001', 'scan-00002', 'scan-00003'])
    expect(await exported(store, 'Other001')).toEqual([scan(4, { code: 'Other001' })])
    expect(await exported(store)).toEqual([scan(1), scan(2), scan(3, { scanned_at: T0 + 5 })])
    db.close()
  })

  it('after the move still stores a scan delivered again once, and new scans after the old', async () => {
    const db = earlierDatabase(fileIn(), stored)
    const store = createSqliteAnalyticsStore(db)
    expect(await store.applyScans([scan(2), scan(5, { scanned_at: T0 + 6 })])).toBe(1)
    expect((await exported(store)).map((s) => s.scan_id)).toEqual(['scan-00001', 'scan-00002', 'scan-00003', 'scan-00005'])
    db.close()
  })

  it('continues an export from a position of the earlier layout (a seq) at the start of its millisecond: repeats, never skips', async () => {
    const db = earlierDatabase(fileIn(), [...stored, scan(5, { scanned_at: T0, scan_id: '0193aaaa-0000-7000-8000-000000000005' })])
    const store = createSqliteAnalyticsStore(db)
    // Page one of the old layout ended on seq 2 (scan-00001, at T0); three scans share T0.
    const page = await store.exportPage('Code0001', { range: ALL_TIME, after: `${T0}:2`, limit: 10 })
    expect(page.items.map((s) => s.scan_id)).toEqual(['0193aaaa-0000-7000-8000-000000000005', 'scan-00001', 'scan-00002', 'scan-00003'])
    db.close()
  })

  it('is moved once when a second connection opens the file after the first (the ingestion Worker)', async () => {
    const path = fileIn()
    const first = earlierDatabase(path, stored)
    const moves: number[] = []
    createSqliteScanWrites(first, { onMoved: (seconds) => moves.push(seconds) })
    const store = createSqliteAnalyticsStore(first)
    const second = openSqlite(path)
    const worker = createSqliteScanWrites(second, { onMoved: (seconds) => moves.push(seconds) })
    expect(moves.length).toBe(1)
    expect(await worker.applyScans([scan(1), scan(6, { scanned_at: T0 + 7 })])).toBe(1)
    expect((await exported(store)).map((s) => s.scan_id)).toEqual(['scan-00001', 'scan-00002', 'scan-00003', 'scan-00006'])
    second.close()
    first.close()
  })

  it('leaves the earlier table whole when the move fails', () => {
    const db = earlierDatabase(fileIn(), stored)
    // A table in the way of the move's new one makes its CREATE fail mid-transaction.
    db.exec('CREATE TABLE scans_by_time (x)')
    expect(() => createSqliteScanWrites(db)).toThrow(/scans_by_time/)
    expect(objects(db)).toEqual(['scans', 'scans_code_time', 'sqlite_autoindex_scans_1'])
    expect(db.query<{ n: number }, []>('SELECT count(*) AS n FROM scans').get()!.n).toBe(4)
    db.close()
  })
})
