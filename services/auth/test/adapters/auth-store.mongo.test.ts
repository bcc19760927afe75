import { describe, expect, it } from 'bun:test'
import mongoose from 'mongoose'
import { connectMongo } from '@lr/platform/mongo'
import { authModels } from '../../src/adapters/auth-models.mongo'
import { createMongoAuthStore } from '../../src/adapters/auth-store.mongo'
import { authStoreContract } from '../auth-store.contract'

const url = process.env.MONGODB_URL

// Reported as skipped, not passed, on a machine without MongoDB.
describe.skipIf(!url)('mongo adapter (MONGODB_URL)', () => {
  authStoreContract('mongo', async () => {
    const base = await connectMongo(url!)
    const conn = base.useDb(`lr_auth_test_${crypto.randomUUID()}`)
    const store = await createMongoAuthStore(conn)
    return {
      ...store,
      async close() {
        await conn.dropDatabase()
        await base.close()
      },
    }
  })
})

// Runs without a server: autoIndex is off, so these declarations are all createIndexes builds.
describe('mongo adapter index declarations', () => {
  const { Accounts, Members, Keys } = authModels(mongoose.createConnection())

  it('declares email unique', () => {
    expect(Accounts.schema.indexes()).toContainEqual([{ email: 1 }, { unique: true }])
  })

  it('declares one membership per team and account', () => {
    expect(Members.schema.indexes()).toContainEqual([{ team_id: 1, account_id: 1 }, { unique: true }])
  })

  it('declares one unrevoked key per account and scope as a unique partial index', () => {
    expect(Keys.schema.indexes()).toContainEqual([{ account_id: 1, scope: 1 }, { unique: true, partialFilterExpression: { live: true } }])
  })
})
