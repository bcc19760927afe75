import { describe, expect, it } from 'bun:test'
import mongoose from 'mongoose'
import { authModels } from '../../src/adapters/auth-models.mongo'
import { createMongoAuthStore } from '../../src/adapters/auth-store.mongo'
import { authStoreContract } from '../auth-store.contract'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../../../test/harness/ferretdb'

// FerretDB started by the harness, or MONGODB_URL; see README "MongoDB compatibility".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo auth store suite: ${skip}`)

describe.skipIf(Boolean(skip))('mongo adapter', () => {
  const url = useMongoServer()
  authStoreContract('mongo', async () => {
    const db = await freshDatabase(url(), 'lr_auth_test')
    const store = await createMongoAuthStore(db.conn)
    return { ...store, close: db.cleanup }
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

  it('declares one unrevoked key per account and scope as a unique slot', () => {
    expect(Keys.schema.indexes()).toContainEqual([{ slot: 1 }, { unique: true }])
  })
})
