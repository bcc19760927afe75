import { afterEach, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Database } from 'bun:sqlite'
import { checkpointElsewhere, createCheckpointer, filesToCheckpoint, HANDED_OVER_AUTOCHECKPOINT_PAGES, openSqlite, WAL_KEPT_BYTES } from '@lr/platform/sqlite'

const dirs: string[] = []
const undo: (() => void)[] = []
afterEach(() => {
  undo.splice(0).forEach((back) => back())
  dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true }))
})
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'lr-checkpoint-'))
  dirs.push(dir)
  return dir
}
const autocheckpointOf = (db: ReturnType<typeof openSqlite>) => (db.query('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint
/** 300 rows of 1 KiB: about 80 pages, all in the WAL until a checkpoint copies them. */
function fill(db: ReturnType<typeof openSqlite>) {
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)')
  const insert = db.prepare('INSERT INTO t (body) VALUES (?)')
  db.transaction(() => {
    for (let i = 0; i < 300; i++) insert.run('x'.repeat(1024))
  })()
}

/** A file opened now keeps SQLite's own checkpoints (every 1000 pages) and is handed to no one. */
function expectOwnCheckpoints(name: string) {
  const db = openSqlite(join(freshDir(), name))
  try {
    expect(autocheckpointOf(db)).toBe(1000)
    expect(filesToCheckpoint()).toEqual([])
  } finally {
    db.close()
  }
}

it("keeps SQLite's own checkpoints unless they are handed over", () => expectOwnCheckpoints('own.sqlite'))

it('hands a file opened after checkpointElsewhere to another connection, which copies its WAL into it', () => {
  undo.push(checkpointElsewhere())
  const path = join(freshDir(), 'handed.sqlite')
  const db = openSqlite(path)
  const checkpointer = createCheckpointer()
  try {
    // Its own connection checkpoints only past the bound, so the WAL stays bounded without the other thread.
    expect(autocheckpointOf(db)).toBe(HANDED_OVER_AUTOCHECKPOINT_PAGES)
    expect(filesToCheckpoint()).toEqual([path])
    fill(db)
    const before = statSync(path).size
    checkpointer.checkpoint(filesToCheckpoint())
    expect(statSync(path).size).toBeGreaterThan(before + 250 * 1024)
    // Nothing the writer committed is lost, and it goes on writing.
    db.exec("INSERT INTO t (body) VALUES ('after')")
    expect(db.query('SELECT count(*) AS n FROM t').get()).toEqual({ n: 301 })
  } finally {
    checkpointer.close()
    db.close()
  }
})

it('skips a file it cannot open, says so, and checkpoints it once it can', () => {
  const dir = freshDir()
  const path = join(dir, 'later.sqlite')
  const checkpointer = createCheckpointer()
  try {
    expect(checkpointer.checkpoint([path])).toEqual([{ path, error: expect.stringMatching(/unable to open/i) }])
    undo.push(checkpointElsewhere())
    const db = openSqlite(path)
    try {
      fill(db)
      const before = statSync(path).size
      expect(checkpointer.checkpoint([path])).toEqual([])
      expect(statSync(path).size).toBeGreaterThan(before)
    } finally {
      db.close()
    }
  } finally {
    checkpointer.close()
  }
})

it('stops handing files over when undone', () => {
  const back = checkpointElsewhere()
  back()
  expectOwnCheckpoints('after-undo.sqlite')
})

it('gives back what a long WAL cycle took once SQLite starts the WAL over: the file keeps WAL_KEPT_BYTES at most', () => {
  undo.push(checkpointElsewhere())
  const path = join(freshDir(), 'long-cycle.sqlite')
  const db = openSqlite(path)
  const reader = new Database(path, { readonly: true })
  const checkpointer = createCheckpointer()
  try {
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)')
    // A reader's snapshot keeps every later page in the WAL: no checkpoint gets past it.
    reader.exec('BEGIN')
    reader.query('SELECT count(*) FROM t').get()
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)')
    const rows = Math.ceil((WAL_KEPT_BYTES * 1.5) / 4096)
    db.transaction(() => {
      for (let i = 0; i < rows; i++) insert.run('x'.repeat(3000))
    })()
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(WAL_KEPT_BYTES * 1.4)
    reader.exec('COMMIT')
    checkpointer.checkpoint([path])
    // The next write starts the WAL over, and the file is cut back to the limit.
    insert.run('after')
    expect(statSync(`${path}-wal`).size).toBeLessThanOrEqual(WAL_KEPT_BYTES)
    expect(db.query('SELECT count(*) AS n FROM t').get()).toEqual({ n: rows + 1 })
  } finally {
    checkpointer.close()
    reader.close()
    db.close()
  }
})
