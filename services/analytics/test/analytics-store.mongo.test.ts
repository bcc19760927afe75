import { describe } from 'bun:test'
import { connectMongo } from '@lr/platform/mongo'
import { createMongoAnalyticsStore } from '../src/adapters/analytics-store.mongo'
import { analyticsStoreContract } from './analytics-store.contract'

const url = process.env.MONGODB_URL

// Runs against a real server only; reported as skipped when MONGODB_URL is unset.
describe.skipIf(!url)('AnalyticsStore on MongoDB', () => {
  analyticsStoreContract(async () => {
    const base = await connectMongo(url!)
    const conn = base.useDb(`lr_analytics_test_${crypto.randomUUID().slice(0, 8)}`, { useCache: false })
    const store = await createMongoAnalyticsStore(conn)
    return {
      store,
      async cleanup() {
        await conn.dropDatabase()
        await base.close()
      },
    }
  })
})
