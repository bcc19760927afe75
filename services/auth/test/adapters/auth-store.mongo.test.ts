import { describe, expect, it } from 'bun:test'
import mongoose from 'mongoose'
import { authModels } from '../../src/adapters/auth-models.mongo'
import { createMongoAuthStore } from '../../src/adapters/auth-store.mongo'
import { authStoreContract } from '../auth-store.contract'
import { connectMongo } from '@lr/platform/mongo'
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

  // The CLI revokes on its own connection while the server records the key's use on another.
  // FerretDB writes an update back as the whole document it read: a use recorded on the key's
  // document undid a revoke that landed meanwhile (95 of 200), and the revoked key worked again.
  it('keeps a revoke that races a use of the key, each on its own connection', async () => {
    const db = await freshDatabase(url(), 'lr_auth_race')
    const other = await connectMongo(url())
    try {
      const revoker = await createMongoAuthStore(db.conn)
      const user = await createMongoAuthStore(other.useDb(db.conn.name, { useCache: false }))
      const undone: string[] = []
      const usesLost: string[] = []
      for (let i = 0; i < 60; i++) {
        const key_id = `key_race${i}`
        await revoker.insertKey({ key_id, account_id: `acct_${i}`, scope: 'personal', name: null, team_id: null, hash: `h${i}`, last_four: 'abcd', created_at: 1, active_at: 1, revoked_at: null, last_used_at: null })
        await Promise.all([revoker.revokeKey(key_id, 100), user.touchKey({ key_id, hash: `h${i}` }, 200)])
        const key = await user.findKeyByHash(`h${i}`)
        if (key?.revoked_at !== 100) undone.push(key_id)
        if (key?.last_used_at !== 200) usesLost.push(key_id)
      }
      expect({ undone, usesLost }).toEqual({ undone: [], usesLost: [] })
    } finally {
      await other.close()
      await db.cleanup()
    }
  }, 20_000)

  // One update command of them all never came back from FerretDB v1.24, and froze the database (mongo-bulk.ts).
  it('gives 120 keys stored before slots existed their slot when it opens', async () => {
    const db = await freshDatabase(url(), 'lr_auth_old')
    try {
      const keys = Array.from({ length: 120 }, (_, n) => ({
        _id: `key_${n}`, account_id: `acct_${n}`, scope: 'personal', team_id: null, hash: `hash_${n}`, last_four: 'abcd',
        created_at: 1_700_000_000, active_at: 1_700_000_000, revoked_at: n % 2 ? 1_700_000_100 : null, last_used_at: null, ...(n % 2 ? {} : { live: true }),
      }))
      await db.conn.db!.collection('auth_keys').insertMany(keys as never[])
      const store = await createMongoAuthStore(db.conn)
      const slots = await db.conn.db!.collection<{ _id: string; slot?: string }>('auth_keys').find({}, { projection: { slot: 1 } }).sort({ _id: 1 }).toArray()
      expect(slots.filter((k) => k.slot === undefined)).toEqual([])
      expect((await store.listKeys('acct_0')).map((k) => k.key_id)).toEqual(['key_0'])
      expect(slots.find((k) => k._id === 'key_1')?.slot).toBe(JSON.stringify(['revoked', 'key_1']))
    } finally {
      await db.cleanup()
    }
  }, 10_000)
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
