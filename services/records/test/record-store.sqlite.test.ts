import { describe } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteRecordStore } from '../src/adapters/record-store.sqlite'
import { receiptContract } from '@lr/platform/testing/receipts'
import { concurrentPagingContract } from '@lr/platform/testing/concurrent-paging'
import { libraryStoreContract } from '@lr/library-records/testing/store-contract'
import { A, record, staticFixture } from './record-store.fixtures'

describe('RecordStore on SQLite', () => {
  libraryStoreContract(staticFixture, async () => {
    const db = openSqlite(':memory:')
    return { store: createSqliteRecordStore(db), cleanup: async () => db.close() }
  })
})

describe('SQLite record store receipts', () => {
  receiptContract(async () => {
    const db = openSqlite(':memory:')
    const store = createSqliteRecordStore(db)
    return {
      store,
      insert: (n, receipt) => store.insertMany(A, [record(n)], receipt),
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
