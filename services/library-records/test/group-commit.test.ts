import { describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createGroupCommit } from '../src/adapters/group-commit'

/**
 * A table of unique values and a write of some values, committed by a group commit that finds
 * the store busy (`busyWithinMs` Infinity: every write waits for the turn) unless told otherwise.
 */
function setup(opts: { during?: (values: string[], db: Database) => void; file?: string; busyWithinMs?: number } = {}) {
  const db = new Database(opts.file ?? ':memory:')
  db.exec('CREATE TABLE IF NOT EXISTS t (v TEXT NOT NULL UNIQUE)')
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)')
  const rows = () => db.query<{ v: string }, []>('SELECT v FROM t ORDER BY rowid').all().map((r) => r.v)
  const write = (values: string[]) => {
    for (const v of values) insert.run(v)
    opts.during?.(values, db)
  }
  return { db, rows, commit: createGroupCommit(db, write, opts.busyWithinMs ?? Number.POSITIVE_INFINITY) }
}

const outcome = (p: Promise<void>) => p.then(() => 'ok', (e: Error) => e.message)

describe('group commit', () => {
  it('rejects only the write of a turn that failed, leaving none of its rows, and commits the others', async () => {
    const { rows, commit } = setup()
    const results = await Promise.all([commit(['a', 'b']), commit(['c', 'a']), commit(['d'])].map(outcome))
    expect(results).toEqual(['ok', 'UNIQUE constraint failed: t.v', 'ok'])
    expect(rows()).toEqual(['a', 'b', 'd'])
  })

  it('commits the writes of one turn in one transaction, and a later write in another', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-group-commit-'))
    try {
      const file = join(dir, 'db.sqlite')
      const reader = () => new Database(file, { readonly: true }).query<{ v: string }, []>('SELECT v FROM t ORDER BY rowid').all().map((r) => r.v)
      // What another connection sees while each write runs: nothing of its turn before the commit.
      const seen: Record<string, string[]> = {}
      const { commit } = setup({ file, during: (values) => void (seen[values[0]!] = reader()) })
      await Promise.all([commit(['a']), commit(['b'])])
      await commit(['c'])
      expect(seen).toEqual({ a: [], b: [], c: ['a', 'b'] })
      expect(reader()).toEqual(['a', 'b', 'c'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('writes at once when the store is idle, and waits for the turn right after a commit', async () => {
    const { rows, commit } = setup({ busyWithinMs: 50 })
    const first = commit(['a'])
    expect(rows()).toEqual(['a'])
    const second = commit(['b'])
    expect(rows()).toEqual(['a'])
    await Promise.all([first, second])
    expect(rows()).toEqual(['a', 'b'])
  })

  it('answers each write by its own outcome when the database ends the transaction itself (a full disk)', async () => {
    const { rows, commit } = setup({
      during: (values, db) => {
        if (values[0] !== 'full') return
        db.exec('ROLLBACK')
        throw new Error('database or disk is full')
      },
    })
    const results = await Promise.all([commit(['a']), commit(['full']), commit(['b'])].map(outcome))
    expect([results[0], results[2]]).toEqual(['ok', 'ok'])
    expect(results[1]).not.toBe('ok')
    expect(rows()).toEqual(['a', 'b'])
    expect(await outcome(commit(['c']))).toBe('ok')
    expect(rows()).toEqual(['a', 'b', 'c'])
  })
})
