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
      insert: (n, receipt) => store.insertMany(A, [record(n)], receipt),
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
