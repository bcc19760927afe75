import { describe } from 'bun:test'
import { expect, it } from 'bun:test'
import { connectMongo } from '@lr/platform/mongo'
import { createMongoWebhookStore } from '../src/adapters/webhook-store.mongo'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../../test/harness/ferretdb'
import { webhookStoreContract } from './webhook-store.contract'

// FerretDB started by the harness, or MONGODB_URL; see README "MongoDB compatibility".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo webhook store suite: ${skip}`)

describe.skipIf(Boolean(skip))('WebhookStore on MongoDB', () => {
  const url = useMongoServer()
  webhookStoreContract(async () => {
    const db = await freshDatabase(url(), 'lr_webhooks_test')
    return { store: await createMongoWebhookStore(db.conn), cleanup: db.cleanup }
  })
})

// Two workers, each on its own connection (separate processes): FerretDB lets several
// compare-and-set writers win, so a claim must be decided by a unique key.
describe.skipIf(Boolean(skip))('WebhookStore on MongoDB, two workers claiming', () => {
  const url = useMongoServer()
  it('lets exactly one worker claim each due message', async () => {
    const name = `lr_webhooks_claims_${crypto.randomUUID().slice(0, 8)}`
    const bases = await Promise.all([connectMongo(url()), connectMongo(url())])
    try {
      const [a, b] = await Promise.all(bases.map((base) => createMongoWebhookStore(base.useDb(name, { useCache: false }))))
      const ids = Array.from({ length: 40 }, (_, n) => `m${n}`)
      await a!.enqueue(ids.map((id) => ({ id, endpoint_id: 'wh_1', library: 'acct:x', event_type: 'scan', event_id: id, body: '{}', attempts: 0, created_at: 1, next_attempt_at: 1, state: 'pending' })))
      const won = await Promise.all(ids.flatMap((id) => [a!.claim(id, 1, 5000), b!.claim(id, 1, 6000)]))
      expect(won.filter(Boolean)).toHaveLength(ids.length)
      expect((await a!.due(1e12, 100)).every((m) => m.attempts === 1)).toBe(true)
    } finally {
      await bases[0]!.useDb(name, { useCache: false }).dropDatabase()
      await Promise.all(bases.map((base) => base.close()))
    }
  })
})
