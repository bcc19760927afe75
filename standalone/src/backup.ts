import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, resolve } from 'node:path'
import { BUSY_TIMEOUT_MS } from '@lr/platform/sqlite'

/**
 * The SQLite files of DATA_DIR in the order they are copied, so that what one file of the copy
 * refers to is in the files copied after it (each file is one moment; the files are not one
 * moment together):
 * - analytics first: a scan names a dynamic code, which (never removed) is then in dynamic's copy;
 * - records, dynamic and webhooks keep each Idempotency-Key's answer beside the writes it answers
 *   (one transaction), and claim the key in idempotency.sqlite before they write: copied after
 *   them, the claims cover every answer in the copy (a claim without an answer is a request that
 *   did not finish, which its retry passes);
 * - auth last: every account and key that made a record of the copy is in it.
 * Files of any other name (none today) follow in name order.
 */
const ORDER = ['analytics', 'records', 'dynamic', 'webhooks', 'idempotency', 'auth']

export interface BackupResult {
  to: string
  files: { file: string; bytes: number }[]
}

/** Thrown for a backup that cannot be made; its message is the one line the command prints. */
export class BackupError extends Error {}

const rankOf = (file: string) => {
  const rank = ORDER.indexOf(basename(file, '.sqlite'))
  return rank < 0 ? ORDER.length : rank
}

/** The store files of `dataDir` (`*.sqlite`; not standalone.lock, the WAL and shared-memory files, or the spools), in copy order. */
export function storeFilesOf(dataDir: string): string[] {
  return readdirSync(dataDir)
    .filter((name) => name.endsWith('.sqlite'))
    .sort((a, b) => rankOf(a) - rankOf(b) || (a < b ? -1 : 1))
}

/**
 * Copies every SQLite store of `dataDir` into the new directory `to`, while `bun start` (or the
 * processes of TRANSPORT=nats) may be writing them. Each file is copied with `VACUUM INTO` from a
 * read transaction of its own: one committed state of that file, whatever is in its WAL, where a
 * file copy (`cp -a`) under writes gave corrupt copies (3 of 10 in a probe: "wrong # of entries in
 * index", "row missing from index") because the database file and its WAL were read at different
 * moments. The copy is written beside `to` and renamed to it when every file is in it and passed
 * `PRAGMA quick_check`, so a backup that failed or was interrupted never looks like a whole one.
 * Not copied: the scan spools and record-event spools (their scans and events are in no file of the
 * copy, as those still in memory are not) and standalone.lock (a start makes its own).
 */
export function backupDataDir(dataDir: string, to: string): BackupResult {
  const source = resolve(dataDir)
  const target = resolve(to)
  if (!existsSync(source) || !statSync(source).isDirectory()) throw new BackupError(`DATA_DIR (${source}) is not a directory`)
  if (existsSync(target)) throw new BackupError(`${target} exists: give a new directory to copy into`)
  if (`${target}/`.startsWith(`${source}/`)) throw new BackupError(`${target} is inside DATA_DIR (${source}): give a directory outside it`)
  const files = storeFilesOf(source)
  if (files.length === 0) throw new BackupError(`DATA_DIR (${source}) holds no SQLite store (*.sqlite): nothing to copy`)
  const partial = `${target}.partial-${process.pid}`
  mkdirSync(partial, { recursive: true })
  try {
    const copied = files.map((file) => copyStore(`${source}/${file}`, `${partial}/${file}`))
    renameSync(partial, target)
    return { to: target, files: copied.map(({ file, bytes }) => ({ file, bytes })) }
  } catch (error) {
    rmSync(partial, { recursive: true, force: true })
    throw error
  }
}

/** One file, as of one read transaction, checked. */
function copyStore(from: string, into: string): { file: string; bytes: number } {
  const db = new Database(from, { readonly: true })
  try {
    // A writer's checkpoint may hold the file a moment: wait as the services do.
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`)
    db.query('VACUUM INTO ?').run(into)
  } catch (error) {
    throw new BackupError(`${from} could not be copied: ${(error as Error).message}`)
  } finally {
    db.close()
  }
  const copy = new Database(into, { readonly: true })
  try {
    const result = copy.query<{ quick_check: string }, []>('PRAGMA quick_check').all()
    if (result.length !== 1 || result[0]!.quick_check !== 'ok') throw new BackupError(`the copy of ${from} failed its check: ${result.map((r) => r.quick_check).join('; ')}`)
  } finally {
    copy.close()
  }
  return { file: basename(into), bytes: statSync(into).size }
}
