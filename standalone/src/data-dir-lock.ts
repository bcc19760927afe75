import { Database } from 'bun:sqlite'
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Config } from '@lr/proto'
import { sqliteStartupError } from '@lr/platform/sqlite-startup'
import { StartupError } from '@lr/platform/startup'

/** The file under DATA_DIR whose lock `bun start` holds while it runs. */
export const DATA_DIR_LOCK = 'standalone.lock'

/**
 * Makes this process the only `bun start` on `dataDir` until it ends, or throws a StartupError
 * saying another one holds it. Two of them on one DATA_DIR had both started without a word, each
 * with its own cursor key (the other refused its cursors) and its own count of a capped code's
 * scans (the cap was exceeded); on MongoDB, where no store is under it, both had taken and
 * written the same scan spools. `setting` names the directory in that error: DATA_DIR, or
 * SCAN_SPOOL_DIR when the spools are elsewhere (directoriesToHold).
 *
 * The lock is SQLite's exclusive lock on a file of its own, held by a connection in
 * `locking_mode = EXCLUSIVE`: an fcntl lock, which the system lets go when the process ends, so a
 * crash (kill -9, an OOM kill) leaves no stale lock behind. A file of its own, because the store
 * files must stay open to the admin command line (it opens auth.sqlite beside the running server)
 * and to the export and ingestion Workers. Not tried again: a second process waiting would only
 * start once the first stopped, which nobody asked of it.
 */
export function holdDataDir(dataDir: string, setting = 'DATA_DIR'): { release(): void } {
  const path = resolve(dataDir, DATA_DIR_LOCK)
  let db: Database | undefined
  try {
    mkdirSync(dataDir, { recursive: true })
    db = new Database(path, { create: true })
    // The lock file holds nothing to roll back: no journal file beside it.
    db.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = MEMORY')
    db.exec('BEGIN EXCLUSIVE; COMMIT')
    return { release: () => db!.close() }
  } catch (error) {
    db?.close()
    if (String((error as { code?: unknown })?.code).startsWith('SQLITE_BUSY')) {
      throw new StartupError(`another bun start runs on ${setting} (${resolve(dataDir)}): it holds ${path}; stop it, or give this one a ${setting} of its own`)
    }
    throw sqliteStartupError(path, error) ?? error
  }
}

/**
 * The directories `bun start` writes, each with the setting that names it, to hold with
 * holdDataDir: DATA_DIR for its SQLite stores and for the scan spools under it, and
 * SCAN_SPOOL_DIR when that is elsewhere. On MongoDB with the spools elsewhere nothing is written
 * under DATA_DIR, so it is not held: there it may be read-only or absent, as it could before the
 * lock (a `bun start` that ran on such a DATA_DIR had refused to start after an upgrade).
 */
export function directoriesToHold(config: Pick<Config, 'STORE' | 'DATA_DIR' | 'SCAN_SPOOL_DIR'>): { dir: string; setting: string }[] {
  const dataDir = resolve(config.DATA_DIR)
  const spoolDir = config.SCAN_SPOOL_DIR && resolve(config.SCAN_SPOOL_DIR)
  const spoolsElsewhere = spoolDir !== undefined && !`${spoolDir}/`.startsWith(`${dataDir}/`)
  return [
    ...(config.STORE === 'sqlite' || !spoolsElsewhere ? [{ dir: config.DATA_DIR, setting: 'DATA_DIR' }] : []),
    ...(spoolsElsewhere ? [{ dir: spoolDir, setting: 'SCAN_SPOOL_DIR' }] : []),
  ]
}
