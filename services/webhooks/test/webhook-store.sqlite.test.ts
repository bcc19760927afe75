import { describe, expect, it } from 'bun:test'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteWebhookStore } from '../src/adapters/webhook-store.sqlite'
import { webhookStoreContract } from './webhook-store.contract'
import { workerFairnessSuite } from './worker-fairness'

const open = async () => {
  const db = openSqlite(':memory:')
  return { store: createSqliteWebhookStore(db), cleanup: async () => db.close() }
}

describe('WebhookStore on SQLite', () => {
  webhookStoreContract(open)
  workerFairnessSuite(open)
})

describe('WebhookStore on SQLite, a database made before due skipped endpoints', () => {
  it('drops the old due index for one with endpoint_id that due() reads, keeping the pending messages', async () => {
    const db = openSqlite(':memory:')
    await createSqliteWebhookStore(db).enqueue([{ id: 'm1', endpoint_id: 'wh_1', library: 'acct:a', event_type: 'scan', event_id: 'e1', body: '{}', attempts: 0, created_at: 1, next_attempt_at: 1, state: 'pending' }])
    // The file as the store before left it: only the due index without endpoint_id.
    db.exec("DROP INDEX webhook_messages_due_endpoint; CREATE INDEX webhook_messages_due ON webhook_messages (next_attempt_at) WHERE state = 'pending'")
    const store = createSqliteWebhookStore(db)
    const indexes = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'webhook_messages_due%'").all().map((i) => i.name)
    const plan = db.query<{ detail: string }, []>("EXPLAIN QUERY PLAN SELECT * FROM webhook_messages WHERE state = 'pending' AND next_attempt_at <= 5 AND endpoint_id NOT IN (SELECT value FROM json_each('[]')) ORDER BY next_attempt_at LIMIT 1").all()
    expect([indexes, plan[0]!.detail, (await store.due(5, 10)).map((m) => m.id)]).toEqual([['webhook_messages_due_endpoint'], expect.stringContaining('USING INDEX webhook_messages_due_endpoint') as never, ['m1']])
    db.close()
  })
})
