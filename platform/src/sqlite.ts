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
  db.exec(`PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA journal_size_limit = ${WAL_KEPT_BYTES};`)
  if (handedOver && path !== ':memory:') {
    db.exec(`PRAGMA wal_autocheckpoint = ${HANDED_OVER_AUTOCHECKPOINT_PAGES}`)
    handedOver.add(path)
  }
  return db
}

/**
 * What a WAL file keeps on disk once SQLite starts it over. Without a limit it keeps the size of
 * its largest cycle until the process stops: a cycle lasts until a checkpoint catches up while no
 * reader holds an older snapshot, which under a steady scan load and API reads took 10-20 s, and
 * a 20-minute one-process soak (4,000 scans/s falling to 500, with analytics reads) left
 * analytics.sqlite-wal at 700 MB beside a 1.3 GB store. Twice what a cycle of the handed-over
 * bound (below) writes.
 */
export const WAL_KEPT_BYTES = 32 * 1024 * 1024

/**
 * A checkpoint copies the WAL's pages into the database file and syncs both files. SQLite runs
 * it in the connection that committed, every 1000 pages by default: on the thread that answers
 * the API, where each sync blocked every request for its duration (a one-process create load on
 * ext4: the main thread 7.4 of 8 s busy, p99 16.6 ms; bench/ANALYSIS.md, twenty-third session).
 * With checkpointElsewhere, another thread checkpoints the files this one opens (the one-process
 * product's ingestion Worker, every CHECKPOINT_EVERY_MS: services/analytics/src/ingest-worker.ts)
 * and their own connections only do so past HANDED_OVER_AUTOCHECKPOINT_PAGES. That bound stays
 * because only a writer restarts the WAL, and only when the checkpoint has caught up, which a
 * checkpoint of another thread under constant writes never quite does: a file's WAL then grows
 * to about 16 MiB, where its own connection checkpoints the few pages left and the WAL starts
 * over. So a Worker that stopped checkpointing costs larger WAL files, nothing else.
 */
let handedOver: Set<string> | undefined
export const HANDED_OVER_AUTOCHECKPOINT_PAGES = 4000
export const CHECKPOINT_EVERY_MS = 50

/**
 * From now on, the files openSqlite opens in this thread are checkpointed by another (see above).
 * Returns the way back (for tests): files opened after it keep SQLite's own checkpoints.
 */
export function checkpointElsewhere(): () => void {
  handedOver ??= new Set()
  return () => void (handedOver = undefined)
}

/** The files whose checkpoints another thread makes: those openSqlite opened since checkpointElsewhere. */
export const filesToCheckpoint = (): string[] => (handedOver ? [...handedOver] : [])

/** A file the checkpointer could not checkpoint this time, and why. */
export interface CheckpointFailure { path: string; error: string }

/**
 * The other thread's side: a PASSIVE checkpoint of each file, through a connection of its own to
 * it (opened once). PASSIVE never waits: it copies what no reader still needs and leaves the rest
 * to the next pass; it never holds up the writers. A file it cannot open or checkpoint (gone
 * before its first pass, unreadable, a failing disk) is tried again next time and returned among
 * the failures, for the thread that has the logger and the metrics to report. A file removed
 * after its connection opened is not: the connection checkpoints the removed file it holds, and
 * the store's readiness is what sees it (sqlite-health.ts).
 */
export function createCheckpointer() {
  const connections = new Map<string, Database>()
  return {
    checkpoint(paths: readonly string[]): CheckpointFailure[] {
      const failures: CheckpointFailure[] = []
      for (const path of paths) {
        try {
          let db = connections.get(path)
          if (!db) {
            db = new Database(path, { readwrite: true, create: false })
            // Its page cache is never read: a checkpoint copies from the WAL file.
            db.exec('PRAGMA cache_size = 16')
            connections.set(path, db)
          }
          db.query('PRAGMA wal_checkpoint(PASSIVE)').get()
        } catch (error) {
          connections.get(path)?.close()
          connections.delete(path)
          failures.push({ path, error: (error as Error)?.message ?? String(error) })
        }
      }
      return failures
    },
    close(): void {
      for (const db of connections.values()) db.close()
      connections.clear()
    },
  }
}

export const BUSY_TIMEOUT_MS = 5000

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
