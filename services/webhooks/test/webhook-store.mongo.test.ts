import { describe } from 'bun:test'
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
