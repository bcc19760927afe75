import { describe, expect, it } from 'bun:test'
import { createSqliteLibraryStore } from '@lr/library-records/sqlite'
import type { DynamicPatch, StoredDynamic } from '../src/ports'
import { DYNAMIC_SQLITE } from '../src/adapters/dynamic-store.sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteDynamicStore } from '../src/adapters/dynamic-store.sqlite'
import { receiptContract } from '@lr/platform/testing/receipts'
import { concurrentPagingContract } from '@lr/platform/testing/concurrent-paging'
import { dynamicStoreContract } from './dynamic-store.contract'
import { A, record } from './dynamic-store.fixtures'

describe('DynamicStore on SQLite', () => {
  dynamicStoreContract(async () => {
    const db = openSqlite(':memory:')
    return { store: createSqliteDynamicStore(db), cleanup: async () => db.close() }
  })
})

describe('DynamicStore on SQLite, a table from before expiry', () => {
  it('adds the expiry columns; its rows read as none and take them by update', async () => {
    const db = openSqlite(':memory:')
    const { extra: _extra, ...before } = DYNAMIC_SQLITE
    await createSqliteLibraryStore<StoredDynamic, DynamicPatch>(db, before).insertMany(A, [record(1)])
    const store = createSqliteDynamicStore(db)
    expect((await store.get(A, record(1).code))?.record).toEqual(record(1))
    expect(await store.resolve(record(1).code)).toEqual({ code: record(1).code, destination_url: record(1).destination_url, status: 'active', deleted: false })
    expect(await store.update(A, record(1).code, { max_scans: 9 }, 1_800_000_000)).toEqual(record(1, { max_scans: 9, updated_at: 1_800_000_000 }))
    db.close()
  })
})

describe('SQLite dynamic store receipts', () => {
  receiptContract(async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteDynamicStore(db)
    return {
      store,
      insert: (n, receipt) => store.insertMany(A, [record(n)], receipt && (() => receipt)),
      count: async () => (await store.list(A, { limit: 1000 })).items.length,
      cleanup: async () => db.close(),
    }
  })
})

describe('DynamicStore on SQLite, several connections to one file', () => {
  concurrentPagingContract(async (writers) => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-dynamic-paging-'))
    const dbs = Array.from({ length: writers + 1 }, () => openSqlite(join(dir, 'dynamic.sqlite')))
    const stores = dbs.map(createSqliteDynamicStore)
    const reader = stores[writers]!
    return {
      insert: async (w, ns) => stores[w]!.insertMany(A, ns.map((n) => record(n))),
      idsOf: (ns) => ns.map((n) => record(n).code),
      async page(after, limit) {
        const { items, next } = await reader.list(A, { after, limit })
        return { ids: items.map((r) => r.code), next }
      },
      async cleanup() {
        for (const db of dbs) db.close()
        rmSync(dir, { recursive: true, force: true })
      },
    }
  })
})

describe('SQLite dynamic store, a table of before redirect rules and reviews', () => {
  it('adds the columns, and its rows read with neither redirect_rules nor pending_change', async () => {
    const db = openSqlite(':memory:')
    db.exec(`CREATE TABLE dynamic_codes (seq INTEGER PRIMARY KEY AUTOINCREMENT, code TEXT NOT NULL UNIQUE, library TEXT NOT NULL,
      destination_url TEXT NOT NULL, name TEXT NOT NULL, style TEXT NOT NULL, status TEXT NOT NULL, team_id TEXT, created_by TEXT NOT NULL,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, deleted_at INTEGER, rev INTEGER)`)
    const old = record(1)
    db.query(`INSERT INTO dynamic_codes (code, library, destination_url, name, style, status, team_id, created_by, created_at, updated_at, rev)
      VALUES (?, ?, ?, ?, '{}', 'active', NULL, ?, ?, ?, 1)`).run(old.code, A, old.destination_url, old.name, old.created_by, old.created_at, old.updated_at)
    const store = createSqliteDynamicStore(db)
    expect((await store.get(A, old.code))?.record).toEqual(old)
    expect(await store.resolve(old.code)).toEqual({ code: old.code, destination_url: old.destination_url, status: 'active', deleted: false })
    expect((await store.list(A, { limit: 10, pending: false })).items).toEqual([old])
    db.close()
  })
})
