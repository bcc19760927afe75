import type { Database } from 'bun:sqlite'
import { describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqliteAtStart, sqliteStartupError } from '@lr/platform/sqlite-startup'
import { StartupError } from '@lr/platform/startup'

/** An error as bun:sqlite throws it. */
const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { name: 'SQLiteError', code })

// The causes a test running as root cannot bring about (permissions), in bun:sqlite's and
// node:fs's own shapes; standalone/test/startup.test.ts brings about the others through bun start.
describe('a SQLite file that cannot be opened at start', () => {
  const path = '/srv/lr/data/records.sqlite'

  it('read-only (the file not writable): names the file and what to give', () => {
    expect(sqliteStartupError(path, sqliteError('SQLITE_READONLY', 'attempt to write a readonly database'))?.message).toBe(
      '/srv/lr/data/records.sqlite cannot be written (attempt to write a readonly database): give this process write access to it and to /srv/lr/data, on a file system mounted read-write',
    )
  })

  it('not openable (DATA_DIR not writable, a read-only mount): names the file and DATA_DIR', () => {
    expect(sqliteStartupError(path, sqliteError('SQLITE_CANTOPEN', 'unable to open database file'))?.message).toBe(
      'cannot open /srv/lr/data/records.sqlite (unable to open database file): DATA_DIR (/srv/lr/data) must be a directory this process can write, on a file system mounted read-write',
    )
  })

  it('DATA_DIR that cannot be made (a read-only file system): names DATA_DIR', () => {
    const error = Object.assign(new Error("EROFS: read-only file system, mkdir '/srv/lr/data'"), { code: 'EROFS', path: '/srv/lr/data' })
    expect(sqliteStartupError(path, error)?.message).toBe("DATA_DIR (/srv/lr/data) cannot be made (EROFS: read-only file system, mkdir '/srv/lr/data'): it must be a directory this process can write")
  })

  it('a relative DATA_DIR is named by its full path', () => {
    expect(sqliteStartupError('./data/auth.sqlite', sqliteError('SQLITE_NOTADB', 'file is not a database'))?.message).toStartWith(`${process.cwd()}/data/auth.sqlite is not a SQLite database`)
  })

  it('passes any other error as it is, and closes the file it opened', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-sqlite-startup-'))
    try {
      const bug = new TypeError('a bug in the schema code')
      let opened: Database | undefined
      const thrown = (() => {
        try {
          openSqliteAtStart(join(dir, 'things.sqlite'), (db) => {
            opened = db
            throw bug
          })
        } catch (error) {
          return error
        }
      })()
      expect(thrown).toBe(bug)
      expect(thrown).not.toBeInstanceOf(StartupError)
      expect(() => opened!.query('SELECT 1')).toThrow(/closed/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
