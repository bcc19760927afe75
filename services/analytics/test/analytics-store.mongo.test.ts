import { describe } from 'bun:test'
import { createMongoAnalyticsStore } from '../src/adapters/analytics-store.mongo'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../../test/harness/ferretdb'
import { analyticsStoreContract } from './analytics-store.contract'

// FerretDB started by the harness, or MONGODB_URL; see README "MongoDB compatibility".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo analytics store suite: ${skip}`)

describe.skipIf(Boolean(skip))('AnalyticsStore on MongoDB', () => {
  const url = useMongoServer()
  analyticsStoreContract(async () => {
    const db = await freshDatabase(url(), 'lr_analytics_test')
    return { store: await createMongoAnalyticsStore(db.conn), cleanup: db.cleanup }
  })
})
