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

describe('WebhookStore on SQLite, its indexes', () => {
  it('replaces the old due and endpoint indexes with ones that carry the endpoint and the due time, keeping the pending messages', async () => {
    const db = openSqlite(':memory:')
    await createSqliteWebhookStore(db).enqueue([{ id: 'm1', endpoint_id: 'wh_1', library: 'acct:a', event_type: 'scan', event_id: 'e1', body: '{}', attempts: 0, created_at: 1, next_attempt_at: 1, state: 'pending' }])
    // The file as the store before left it.
    db.exec(`DROP INDEX webhook_messages_due_endpoint; DROP INDEX webhook_messages_endpoint_due;
      CREATE INDEX webhook_messages_due ON webhook_messages (next_attempt_at) WHERE state = 'pending'; CREATE INDEX webhook_messages_endpoint ON webhook_messages (endpoint_id)`)
    const store = createSqliteWebhookStore(db)
    const indexes = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'webhook_messages' AND sql IS NOT NULL ORDER BY name").all().map((i) => i.name)
    expect(indexes).toEqual(['webhook_messages_due_endpoint', 'webhook_messages_endpoint_due'])
    expect([(await store.due(5, 10)).map((m) => m.id), (await store.dueOf('wh_1', 5, 10)).map((m) => m.id)]).toEqual([['m1'], ['m1']])
    db.close()
  })

  it('reads due messages, all or one endpoint\'s, and an endpoint\'s messages through those indexes', () => {
    const db = openSqlite(':memory:')
    createSqliteWebhookStore(db)
    const plan = (sql: string) => db.query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`).all().map((row) => row.detail).join('; ')
    expect(plan("SELECT * FROM webhook_messages WHERE state = 'pending' AND next_attempt_at <= 5 AND endpoint_id NOT IN (SELECT value FROM json_each('[]')) ORDER BY next_attempt_at LIMIT 1"))
      .toContain('USING INDEX webhook_messages_due_endpoint')
    expect(plan("SELECT * FROM webhook_messages WHERE endpoint_id = 'e' AND state = 'pending' AND next_attempt_at <= 5 ORDER BY next_attempt_at LIMIT 1")).toContain('USING INDEX webhook_messages_endpoint_due')
    expect(plan("DELETE FROM webhook_messages WHERE endpoint_id = 'e'")).toContain('USING INDEX webhook_messages_endpoint_due')
    db.close()
  })
})
