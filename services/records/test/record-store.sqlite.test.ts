import { describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Database } from 'bun:sqlite'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteRecordStore } from '../src/adapters/record-store.sqlite'
import { receiptContract } from '@lr/platform/testing/receipts'
import { captureLog } from '@lr/platform/testing/log-capture'
import { concurrentPagingContract } from '@lr/platform/testing/concurrent-paging'
import { concurrentWritesContract } from '@lr/library-records/testing/concurrent-writes'
import { libraryStoreContract } from '@lr/library-records/testing/store-contract'
import { A, record, staticFixture } from './record-store.fixtures'

// The table as stores before tombstones made it: no deleted_at (deletes were hard), no rev.
const OLD_TABLE = `CREATE TABLE static_records (seq INTEGER PRIMARY KEY AUTOINCREMENT, qr_id TEXT NOT NULL UNIQUE,
  library TEXT NOT NULL, url TEXT NOT NULL, name TEXT NOT NULL, style TEXT NOT NULL, status TEXT NOT NULL, team_id TEXT,
  created_by TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`

describe('RecordStore on SQLite', () => {
  libraryStoreContract(staticFixture, async () => {
    const db = openSqlite(':memory:')
    return { store: createSqliteRecordStore(db), cleanup: async () => db.close() }
  })
})

describe('RecordStore on SQLite, the export read', () => {
  it('hands each style over as the JSON text it holds (the contract compares the pages with list)', async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteRecordStore(db)
    await store.insertMany(A, [record(1)])
    expect((await store.exportPage!(A, { limit: 10 })).items.map((r) => r.style)).toEqual([JSON.stringify(record(1).style)])
    db.close()
  })
})

describe('SQLite record store receipts', () => {
  receiptContract(async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteRecordStore(db)
    return {
      store,
      insert: (n, receipt) => store.insertMany(A, [record(n)], receipt && (() => receipt)),
      count: async () => (await store.list(A, { limit: 1000 })).items.length,
      cleanup: async () => db.close(),
    }
  })
})

describe('RecordStore on SQLite, several connections to one file', () => {
  concurrentPagingContract(async (writers) => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-records-paging-'))
    const dbs = Array.from({ length: writers + 1 }, () => openSqlite(join(dir, 'records.sqlite')))
    const stores = dbs.map(createSqliteRecordStore)
    const reader = stores[writers]!
    return {
      insert: async (w, ns) => stores[w]!.insertMany(A, ns.map((n) => record(n))),
      idsOf: (ns) => ns.map((n) => record(n).qr_id),
      async page(after, limit) {
        const { items, next } = await reader.list(A, { after, limit })
        return { ids: items.map((r) => r.qr_id), next }
      },
      async cleanup() {
        for (const db of dbs) db.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  })
})

describe('RecordStore on SQLite, several connections writing one record', () => {
  concurrentWritesContract(staticFixture, async (replicas) => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-records-writes-'))
    const dbs = Array.from({ length: replicas }, () => openSqlite(join(dir, 'records.sqlite')))
    return {
      stores: dbs.map(createSqliteRecordStore) as never,
      async cleanup() {
        for (const db of dbs) db.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  })
})

/** A database with the table as stores before tombstones made it, holding records 1 to `count`. */
function oldDatabase(count: number) {
  const db = openSqlite(':memory:')
  db.exec(OLD_TABLE)
  const insert = db.prepare('INSERT INTO static_records (qr_id, library, url, name, style, status, team_id, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
  for (let n = 1; n <= count; n++) {
    const r = record(n)
    insert.run(r.qr_id, A, r.url, r.name, '{}', r.status, null, r.created_by, r.created_at, r.updated_at)
  }
  return db
}

describe('RecordStore on SQLite, a file from before tombstones', () => {
  it('adds the columns and keeps every record listed, in order, with change positions', async () => {
    const db = oldDatabase(3)
    const store = createSqliteRecordStore(db)
    expect((await store.list(A, { limit: 10 })).items).toEqual([record(1), record(2), record(3)])
    // At record 3's time, the latest of the old rows: record 4's is later, so it is stored as given.
    const deletedAt = record(3).updated_at
    await store.delete(A, record(2).qr_id, deletedAt)
    await store.insertMany(A, [record(4)])
    expect((await store.changes(A, { limit: 10, includeDeleted: true })).items).toEqual([
      record(1), record(3), { qr_id: record(2).qr_id, deleted_at: deletedAt, updated_at: deletedAt }, record(4),
    ])
    // Tags came with the migration: old rows read [], and a tag given later is found by the filter.
    await store.update(A, record(1).qr_id, { tags: ['print'] }, 1_800_000_001)
    expect((await store.list(A, { limit: 10, tags: ['print'] })).items).toEqual([record(1, { tags: ['print'], updated_at: 1_800_000_001 })])
    db.close()
  })

  it('gives a row an older release inserted after the migration (no rev) the next change position at the next open: in the changes', async () => {
    const db = oldDatabase(2)
    const store = createSqliteRecordStore(db)
    await store.update(A, record(1).qr_id, { name: 'Later' }, 1_800_000_000)
    // What a release before change positions inserts into the migrated table: no rev.
    const r = record(3)
    db.prepare('INSERT INTO static_records (qr_id, library, url, name, style, status, team_id, created_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(r.qr_id, A, r.url, r.name, '{}', r.status, null, r.created_by, r.created_at, r.updated_at)
    const changed = async () => (await createSqliteRecordStore(db).changes(A, { limit: 10 })).items
    // After every change so far, at the latest change's time: a sync by updated_since meets it.
    expect(await changed()).toEqual([record(2), record(1, { name: 'Later', updated_at: 1_800_000_000 }), record(3, { updated_at: 1_800_000_000 })])
    expect(await changed()).toEqual([record(2), record(1, { name: 'Later', updated_at: 1_800_000_000 }), record(3, { updated_at: 1_800_000_000 })])
    db.close()
  })

  it('logs the migration of a table with records, as it starts and when done; nothing for a new, an empty or a migrated table', () => {
    const { lines, restore } = captureLog()
    try {
      const migrationLines = () => lines.filter((line) => line.msg.startsWith('records migration')).map(({ msg, ...fields }): Record<string, unknown> => ({ msg: msg.split(':')[0], ...fields }))
      createSqliteRecordStore(openSqlite(':memory:'))
      createSqliteRecordStore(oldDatabase(0))
      expect(migrationLines()).toEqual([])
      const db = oldDatabase(3)
      createSqliteRecordStore(db)
      const adding = ['deleted_at', 'rev', 'tags', 'static_records_library_rev', 'static_records_no_rev', 'static_records_tags', 'static_records_tags_insert', 'static_records_tags_update', 'static_records_library_name', 'static_records_library_created', 'static_records_library_updated']
      expect(migrationLines()).toEqual([
        { msg: 'records migration started', store: 'static_records', records: 3, adding },
        { msg: 'records migration done', store: 'static_records', records: 3, adding, seconds: expect.any(Number) },
      ])
      createSqliteRecordStore(db)
      expect(migrationLines()).toHaveLength(2)
      db.close()
    } finally {
      restore()
    }
  })
})

/** The SELECTs `work` runs on `db` (not those it only prepares for later): their text, and the parameters of each run. */
function selectsRunBy(db: Database, work: (db: Database) => unknown): { sql: string; params: unknown }[] {
  const run: { sql: string; params: unknown }[] = []
  const watched = (statement: { all: unknown; get: unknown }, sql: string) =>
    new Proxy(statement, { get: (target, key) => {
      const value = Reflect.get(target, key)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        if (['all', 'get', 'values', 'iterate'].includes(String(key)) && /^\s*SELECT/i.test(sql)) run.push({ sql, params: args[0] })
        return value.apply(target, args)
      }
    } })
  work(new Proxy(db, { get: (target, key) => {
    const value = Reflect.get(target, key)
    if (key === 'query' || key === 'prepare') return (sql: string) => watched(value.call(target, sql), sql)
    return typeof value === 'function' ? value.bind(target) : value
  } }))
  return run
}

describe('RecordStore on SQLite, opening a file', () => {
  it('reads no table whole at start: the check for rows without a change position is a read of its partial index', () => {
    const db = openSqlite(':memory:')
    createSqliteRecordStore(db)
    const selects = selectsRunBy(db, createSqliteRecordStore).map(({ sql }) => sql)
    expect(selects.some((sql) => sql.includes('rev IS NULL'))).toBe(true)
    const plans = selects.map((sql) => db.query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`).all().map((row) => row.detail))
    // A SCAN of the table reads every record, one of an index every entry. Two are allowed: the
    // partial index of rows without rev (empty but for an old release's rows), and the latest
    // updated_at's read of the small (library, updated_at, seq) index (README "Operations", "Large libraries").
    const allowed = ['SCAN static_records USING INDEX static_records_no_rev', 'SCAN static_records USING COVERING INDEX static_records_library_updated']
    expect(plans.flat().filter((detail) => detail.startsWith('SCAN static_records') && !allowed.includes(detail))).toEqual([])
    expect(plans.flat()).toContain(allowed[0]!)
    db.close()
  })
})

describe('RecordStore on SQLite, a list by several tags', () => {
  it('reads the table through one list merged from every tag, not a probe per pair of the tags\' records', async () => {
    const db = openSqlite(':memory:')
    await createSqliteRecordStore(db).insertMany(A, [record(1, { tags: ['print', 'summer'] }), record(2, { tags: ['print'] }), record(3, { tags: ['summer'] })])
    // list runs its query before its first await: the SELECT is seen while the store is in hand.
    const selects = selectsRunBy(db, (watched) => createSqliteRecordStore(watched).list(A, { limit: 10, tags: ['print', 'summer'] }))
    const listed = selects.map(({ sql }) => sql).filter((sql) => sql.includes('static_records_tags'))
    expect(listed).toHaveLength(1)
    const plan = db.query<{ detail: string }, Record<string, string | number>>(`EXPLAIN QUERY PLAN ${listed[0]}`).all({ library: A, limit: 11, tag0: 'print', tag1: 'summer' }).map((row) => row.detail)
    // Each IN list as its own equality on the table's index (`seq=? AND rowid=?`) is a nested loop over both lists.
    expect(plan.filter((detail) => detail.startsWith('SEARCH static_records USING'))).toEqual(['SEARCH static_records USING INDEX static_records_library_seq (library=? AND seq=?)'])
    expect((await createSqliteRecordStore(db).list(A, { limit: 10, tags: ['print', 'summer'] })).items).toEqual([record(1, { tags: ['print', 'summer'] })])
    db.close()
  })
})

describe('RecordStore on SQLite, a list of changes from updated_since', () => {
  it('starts its walk at the first record changed since, not at the library\'s first change', async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteRecordStore(db)
    await store.insertMany(A, Array.from({ length: 50 }, (_, i) => record(i + 1)))
    await store.update(A, record(7).qr_id, { name: 'Later' }, 1_900_000_000)
    const since = (updatedSince: number) => {
      const [walk] = selectsRunBy(db, (watched) => createSqliteRecordStore(watched).changes(A, { limit: 10, updatedSince })).filter(({ sql }) => sql.includes('rev > $after'))
      // What the walk may read: the library's records past the position it starts after.
      const after = (walk!.params as { after: number }).after
      return db.query<{ n: number }, [string, number]>('SELECT count(*) AS n FROM static_records WHERE library = ? AND rev > ?').get(A, after)!.n
    }
    expect(since(1_900_000_000)).toBe(1)
    expect(since(1_900_000_001)).toBe(0)
    expect(since(0)).toBe(50)
    expect((await store.changes(A, { limit: 10, updatedSince: 1_900_000_000 })).items).toEqual([record(7, { name: 'Later', updated_at: 1_900_000_000 })])
    db.close()
  })
})

describe('RecordStore on SQLite, a sorted page after a cursor', () => {
  it('seeks the cursor\'s key and seq together, not the key alone (which reads every record sharing the key)', async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteRecordStore(db)
    await store.insertMany(A, [1, 2, 3, 4, 5].map((n) => record(n, { name: 'Table tent' })))
    const first = await store.list(A, { limit: 2, sort: 'name' })
    const selects = selectsRunBy(db, (watched) => createSqliteRecordStore(watched).list(A, { limit: 2, sort: 'name', after: first.next! }))
    const plans = selects.map(({ sql, params }) => db.query<{ detail: string }, Record<string, string | number>>(`EXPLAIN QUERY PLAN ${sql}`).all(params as never).map((row) => row.detail))
    expect(plans.flat()).toContain('SEARCH static_records USING INDEX static_records_library_name (library=? AND name=? AND seq>?)')
    expect((await store.list(A, { limit: 10, sort: 'name', after: first.next! })).items.map((r) => r.qr_id)).toEqual([3, 4, 5].map((n) => record(n).qr_id))
    db.close()
  })
})
