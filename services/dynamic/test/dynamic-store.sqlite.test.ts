import { describe } from 'bun:test'
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
