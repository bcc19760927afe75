import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'

/** Where the SQLite store `name` lives under DATA_DIR. */
export const sqlitePathOf = (dataDir: string, name: string): string => `${dataDir}/${name}.sqlite`

/**
 * Opens an embedded SQLite file for one service's store (":memory:" for tests).
 * WAL lets the admin command line write while a running server reads; busy_timeout makes the
 * two wait for each other instead of failing.
 */
export function openSqlite(path: string): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new Database(path, { create: true, strict: true })
  // busy_timeout first: a file two processes open at once (the key claims of records and
  // dynamic) has one of them wait on the other's switch to WAL instead of failing "locked".
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
  switchToWal(db)
  db.exec('PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;')
  return db
}

const BUSY_TIMEOUT_MS = 5000

/**
 * The switch to WAL takes the file's exclusive lock from a shared one. When two connections
 * both hold the shared lock and both ask for it, SQLite answers one SQLITE_BUSY at once, without
 * its busy handler (waiting could deadlock), so the busy timeout does not cover this step: it
 * retries itself, for as long as the busy timeout would wait (a CI run saw "database is locked"
 * from six processes opening one new file).
 */
function switchToWal(db: Database): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    try {
      db.exec('PRAGMA journal_mode = WAL')
      return
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error
      Bun.sleepSync(wait)
    }
  }
}

/**
 * Adds to `table` those of `columns` (name -> type and constraints, as ALTER TABLE ADD COLUMN
 * takes them) it lacks: a database made before them gets them. Returns the names it added, so
 * the caller can fill them in. Run it in the transaction that creates the schema when several
 * connections may open one file at once.
 */
export function addMissingColumns(db: Database, table: string, columns: Record<string, string>): string[] {
  const present = new Set(db.query<{ name: string }, []>(`PRAGMA table_info(${table})`).all().map((c) => c.name))
  const missing = Object.keys(columns).filter((name) => !present.has(name))
  for (const name of missing) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${columns[name]}`)
  return missing
}
