import type { Database } from 'bun:sqlite'
import { statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { openSqlite } from './sqlite'
import { StartupError } from './startup'

/**
 * Opens the SQLite file at `path` (openSqlite) and hands it to `make` (which makes the store's
 * tables), closing it when `make` fails. A failure of the file or of its directory becomes a
 * StartupError naming it by its full path, with what to do where that is plain: SQLite's own
 * words ("file is not a database", "unable to open database file") named no file, and an
 * operator could not tell which of DATA_DIR's files, or whether DATA_DIR itself, was the cause
 * (README "Operations", "Start-up"). Anything else passes as it is.
 */
export function openSqliteAtStart<T>(path: string, make: (db: Database) => T): T {
  try {
    const db = openSqlite(path)
    try {
      return make(db)
    } catch (error) {
      db.close()
      throw error
    }
  } catch (error) {
    throw sqliteStartupError(path, error) ?? error
  }
}

/** The StartupError for a SQLite file's failure to open, or undefined when it is no such failure. */
export function sqliteStartupError(path: string, error: unknown): StartupError | undefined {
  const { code, message, path: where } = (error ?? {}) as { code?: unknown; message?: unknown; path?: unknown }
  const file = resolve(path)
  const dir = dirname(file)
  const said = String(message ?? '').split('\n')[0]
  const line = (text: string) => new StartupError(text)
  switch (String(code ?? '').replace(/^(SQLITE_[A-Z]+)_.*$/, '$1')) {
    case 'SQLITE_NOTADB':
      return line(`${file} is not a SQLite database (${said}): move it away, or set DATA_DIR to the directory of this product's files`)
    case 'SQLITE_CORRUPT':
      return line(`${file} is damaged (${said}): restore it from a backup`)
    case 'SQLITE_READONLY':
      return line(`${file} cannot be written (${said}): give this process write access to it and to ${dir}, on a file system mounted read-write`)
    case 'SQLITE_CANTOPEN':
      if (isDirectory(file)) return line(`${file} is a directory, not a SQLite file (${said}): move it away`)
      return line(`cannot open ${file} (${said}): DATA_DIR (${dir}) must be a directory this process can write, on a file system mounted read-write`)
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      return line(`${file} is locked by another process (${said})`)
    case 'SQLITE_FULL':
    case 'SQLITE_IOERR':
    case 'SQLITE_PERM':
    case 'SQLITE_AUTH':
      return line(`cannot use ${file} (${said})`)
    // Making DATA_DIR (mkdir -p) failed: `where` is the part of its path that was the cause.
    case 'EEXIST':
      return line(`DATA_DIR (${dir}) cannot be made: ${resolve(String(where ?? dir))} is a file, not a directory (EEXIST)`)
    case 'ENOTDIR':
      return line(`DATA_DIR (${dir}) cannot be made: a part of its path is a file, not a directory (ENOTDIR)`)
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return line(`DATA_DIR (${dir}) cannot be made (${said}): it must be a directory this process can write`)
  }
  return undefined
}

/** Whether `path` is a directory; false where it cannot be told (a directory this process may not search). */
function isDirectory(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false
  } catch {
    return false
  }
}
