import type { Database } from 'bun:sqlite'
import { statfsSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { log } from './log'

/**
 * What a store's driver adds to its port's ping: `SELECT 1` answers from a connection whose file
 * is locked, full or gone, so a SQLite store's readiness asks the file itself.
 */
export interface StoreHealth {
  /** A call failed because the store could not be used (locked, disk full, I/O, read-only): not ready until shown otherwise. */
  unusable(): void
  /** True while the store can take writes; cheap enough for every probe, never throws. */
  ready(): boolean
}

/**
 * How long a probe waits for another connection's write lock. Long enough to wait out a short
 * transaction of another connection (the admin command line's, a few milliseconds); short
 * enough that a probe of a locked store holds this thread only that long, where a write
 * waits out the connection's whole busy timeout (5 s, openSqlite) before it fails.
 */
export const PROBE_BUSY_TIMEOUT_MS = 50

/**
 * Free space the file system of a store that failed must have again before a probe tries its
 * write. The probe's one-page write alone proves nothing on a full disk: it lands in WAL space
 * the failed write left behind (seen on a full tmpfs: ready while every create was a 503). A
 * margin, not a promise: four times the largest body the API takes (1 MiB), and small enough
 * for a small volume.
 */
export const FREE_BYTES_AFTER_FAILURE = 4 * 1024 * 1024

/** The `error` line of a store whose file was removed or replaced under the process. */
export const REPLACED = 'the SQLite file this store has open is no longer at its path (removed or replaced): not ready; what was written to it since is lost when the process stops'

export interface SqliteHealthOptions {
  /**
   * Whether to probe the write lock. Off for a file another thread writes in long transactions
   * (analytics' ingestion Worker, which holds the lock for a whole batch of scans): the probe
   * would see its own process's writer as a stranger's lock.
   */
  lockProbe?: boolean
  /** FREE_BYTES_AFTER_FAILURE, unless a test says otherwise. */
  freeBytesAfterFailure?: number
}

/**
 * The readiness of the SQLite store `db` has open at `path` (README "Operations", "The store
 * away"). Not ready while
 * - the file at `path` is no longer the one `db` has open (removed or replaced under the
 *   process): its connection goes on writing to the open file, which no restart finds, and
 *   nothing else fails (the ingestion Worker's checkpoints go on too, through a connection to
 *   the same open file). Logged once, as an `error` naming the file, until it is back;
 * - another connection holds the write lock past PROBE_BUSY_TIMEOUT_MS (BEGIN IMMEDIATE; ROLLBACK);
 * - a call failed as unusable (`unusable()`: a full disk, an I/O error, a lock, a file it may not
 *   write) and no probe has since found FREE_BYTES_AFTER_FAILURE free and committed a write of its
 *   own (taking the lock alone succeeds on a full disk, a read-only or failing one). The write sets
 *   the header's user_version to the value it has (one page, no schema of its own), and is made
 *   only while marked, so a healthy store's probe writes nothing. A connection SQLite opened
 *   read-only (the file not writable for this process when it started) stays read-only: its
 *   store is ready again only after a restart, once the file may be written.
 */
export function createSqliteHealth(db: Database, path: string, options: SqliteHealthOptions = {}): StoreHealth {
  const { lockProbe = true, freeBytesAfterFailure = FREE_BYTES_AFTER_FAILURE } = options
  const opened = statSync(path)
  let failed = false
  let replaced = false
  const sameFile = (): boolean => {
    const now = statSync(path, { throwIfNoEntry: false })
    const same = now !== undefined && now.ino === opened.ino && now.dev === opened.dev
    if (!same && !replaced) log().error({ file: resolve(path) }, REPLACED)
    replaced = !same
    return same
  }
  const takesWrites = (): boolean => {
    // This connection's own transaction: it holds the lock itself (never across an await today).
    if (db.inTransaction) return true
    const { timeout } = db.query<{ timeout: number }, []>('PRAGMA busy_timeout').get()!
    db.exec(`PRAGMA busy_timeout = ${PROBE_BUSY_TIMEOUT_MS}`)
    try {
      db.exec('BEGIN IMMEDIATE')
      if (!failed) {
        db.exec('ROLLBACK')
        return true
      }
      const { user_version } = db.query<{ user_version: number }, []>('PRAGMA user_version').get()!
      db.exec(`PRAGMA user_version = ${user_version}`)
      db.exec('COMMIT')
      failed = false
      return true
    } finally {
      if (db.inTransaction) db.exec('ROLLBACK')
      db.exec(`PRAGMA busy_timeout = ${timeout}`)
    }
  }
  return {
    unusable: () => void (failed = true),
    ready() {
      try {
        if (!sameFile()) return false
        if (failed && freeBytes(path) < freeBytesAfterFailure) return false
        return lockProbe || failed ? takesWrites() : true
      } catch {
        return false
      }
    },
  }
}

/** What the file system holding `path` has free for this process (root may use the blocks kept for it). */
function freeBytes(path: string): number {
  // Counted in fragments (statvfs's f_frsize), which Node's typings leave out.
  const { bavail, bfree, bsize, frsize } = statfsSync(dirname(path)) as { bavail: number; bfree: number; bsize: number; frsize?: number }
  return (process.getuid?.() === 0 ? bfree : bavail) * (frsize || bsize)
}
