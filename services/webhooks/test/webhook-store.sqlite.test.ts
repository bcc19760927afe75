import { describe } from 'bun:test'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteWebhookStore } from '../src/adapters/webhook-store.sqlite'
import { webhookStoreContract } from './webhook-store.contract'

describe('WebhookStore on SQLite', () => {
  webhookStoreContract(async () => {
    const db = openSqlite(':memory:')
    return { store: createSqliteWebhookStore(db), cleanup: async () => db.close() }
  })
})
