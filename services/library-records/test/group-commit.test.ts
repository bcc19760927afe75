import { describe, expect, it } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createGroupCommit } from '../src/adapters/group-commit'

/** A table of unique values and a write of some values (a transaction function, as the stores' are). */
function setup(afterEach?: (values: string[]) => void, file = ':memory:') {
  const db = new Database(file)
  db.exec('CREATE TABLE t (v TEXT NOT NULL UNIQUE)')
  const insert = db.prepare('INSERT INTO t (v) VALUES (?)')
  const rows = () => db.query<{ v: string }, []>('SELECT v FROM t ORDER BY rowid').all().map((r) => r.v)
  const write = db.transaction((values: string[]) => {
    for (const v of values) insert.run(v)
    afterEach?.(values)
  })
  return { db, rows, commit: createGroupCommit(db, write) }
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
      const { commit } = setup((values) => void (seen[values[0]!] = reader()), file)
      await Promise.all([commit(['a']), commit(['b'])])
      await commit(['c'])
      expect(seen).toEqual({ a: [], b: [], c: ['a', 'b'] })
      expect(reader()).toEqual(['a', 'b', 'c'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('rejects every write of the turn when SQLite rolled the whole transaction back, and keeps none of them', async () => {
    // As on a full disk: the database itself ends the transaction while a write runs.
    const { db, rows, commit } = setup((values) => {
      if (values[0] === 'full') {
        db.exec('ROLLBACK')
        throw new Error('database or disk is full')
      }
    })
    const results = await Promise.all([commit(['a']), commit(['full']), commit(['b'])].map(outcome))
    expect(results).toEqual(['database or disk is full', 'database or disk is full', 'database or disk is full'])
    expect(rows()).toEqual([])
    expect(await outcome(commit(['c']))).toBe('ok') // and the next turn writes again
    expect(rows()).toEqual(['c'])
  })
})
