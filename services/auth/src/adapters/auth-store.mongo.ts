import type { Connection, mongo } from 'mongoose'
import { bulkUpdate } from '@lr/platform/mongo-bulk'
import { databaseNow } from '@lr/platform/mongo-clock'
import { type Account, type KeyScope, type Membership, StoreConflict, type Team } from '@lr/proto'
import type { AccountChanges, AuthStore, StoredKey } from '../ports'
import { authModels, type KeyDoc, type KeyUseDoc, liveSlot, revokedSlot } from './auth-models.mongo'

/**
 * Whether a write failed on a unique index (11000). Which index is found by looking, not from
 * the error's keyPattern, which FerretDB v1 leaves out (README "MongoDB compatibility").
 */
const isDuplicateKey = (error: unknown) => (error as { code?: unknown })?.code === 11000

const toKey = ({ _id, live: _live, slot: _slot, seq: _seq, ...rest }: KeyDoc): StoredKey => ({ key_id: _id, ...rest, name: rest.name ?? null })
const toAccount = (d: { _id: string; email: string; tier: Account['tier']; api_grant_until: number | null; created_at: number }): Account => ({
  account_id: d._id,
  email: d.email,
  tier: d.tier,
  api_grant_until: d.api_grant_until ?? null,
  created_at: d.created_at,
})
const toMembership = (d: Membership): Membership => ({ team_id: d.team_id, account_id: d.account_id, role: d.role })

/**
 * Gives keys stored before the `slot` field existed their slot, so its unique index can be built
 * (README "MongoDB compatibility"). Finds nothing, in one query, once every key has one.
 */
async function fillMissingSlots(Keys: ReturnType<typeof authModels>['Keys']): Promise<void> {
  const old = await Keys.find({ slot: { $exists: false } }, { account_id: 1, scope: 1, live: 1 }).lean()
  if (old.length === 0) return
  // In short commands: every one of these updates matches a document (mongo-bulk.ts).
  await bulkUpdate(Keys.collection as unknown as mongo.Collection<KeyDoc>, old.map((k) => ({ updateOne: { filter: { _id: k._id }, update: { $set: { slot: k.live ? liveSlot(k.account_id, k.scope) : revokedSlot(k._id) } } } })))
}

/**
 * AuthStore over a mongoose connection (opened with connectMongo, autoIndex off): declares its
 * collections and creates their unique indexes before it answers.
 */
export async function createMongoAuthStore(conn: Connection): Promise<AuthStore> {
  const { Accounts, Teams, Members, Keys, KeyUses } = authModels(conn)
  await fillMissingSlots(Keys)
  await Promise.all([Accounts, Teams, Members, Keys, KeyUses].map((model) => model.createIndexes()))
  const now = await databaseNow(conn)
  let last = 0
  // Increasing within this process; across replicas ordered by the server's clock (ms).
  const nextSeq = () => (last = Math.max(last + 1, now() * 1000))
  /** A key as stored with its last use (KeyUseDoc): the later of its own field and its auth_key_uses document. */
  const usedKey = (doc: KeyDoc, use: KeyUseDoc | null | undefined) => toKey({ ...doc, last_used_at: Math.max(doc.last_used_at ?? 0, use?.last_used_at ?? 0) || null })
  const withUses = async (docs: KeyDoc[]): Promise<StoredKey[]> => {
    const uses = docs.length === 0 ? [] : await KeyUses.find({ _id: { $in: docs.map((d) => d.hash) } }).lean()
    const byHash = new Map(uses.map((use) => [use._id, use]))
    return docs.map((doc) => usedKey(doc, byHash.get(doc.hash)))
  }
  const withUse = async (doc: KeyDoc | null) => (doc ? (await withUses([doc]))[0]! : null)

  return {
    async insertAccount({ account_id, ...rest }) {
      try {
        await Accounts.create({ _id: account_id, ...rest })
      } catch (error) {
        // FerretDB reports no keyPattern with a duplicate key: which key it was is looked up.
        if (!isDuplicateKey(error)) throw error
        if (await Accounts.exists({ email: rest.email, _id: { $ne: account_id } })) throw new StoreConflict('email', rest.email)
        throw new StoreConflict('account_id', account_id)
      }
    },
    async getAccount(accountId) {
      const doc = await Accounts.findById(accountId).lean()
      return doc ? toAccount(doc) : null
    },
    async findAccountByEmail(email) {
      const doc = await Accounts.findOne({ email }).lean()
      return doc ? toAccount(doc) : null
    },
    async listAccounts(afterEmail, limit) {
      const docs = await Accounts.find(afterEmail === null ? {} : { email: { $gt: afterEmail } }).sort({ email: 1 }).limit(limit).lean()
      return docs.map(toAccount)
    },
    async updateAccount(accountId, changes: AccountChanges) {
      const set = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined))
      const doc =
        Object.keys(set).length === 0
          ? await Accounts.findById(accountId).lean()
          : await Accounts.findOneAndUpdate({ _id: accountId }, { $set: set }, { returnDocument: 'after' }).lean()
      return doc ? toAccount(doc) : null
    },

    // No transactions here (FerretDB has none): the admin's membership first, so a crash between
    // the two writes leaves a membership of a team id nobody was given, never a team without an
    // admin. $setOnInsert: an id taken by another team leaves its existing member's role alone.
    async insertTeam({ team_id, name }, adminId) {
      const member = await Members.updateOne({ team_id, account_id: adminId }, { $setOnInsert: { role: 'admin' } }, { upsert: true })
      try {
        await Teams.create({ _id: team_id, name })
      } catch (error) {
        if (!isDuplicateKey(error)) throw error
        if (member.upsertedCount > 0) await Members.deleteOne({ team_id, account_id: adminId })
        throw new StoreConflict('team_id', team_id)
      }
    },
    async getTeam(teamId) {
      const doc = await Teams.findById(teamId).lean()
      return doc ? ({ team_id: doc._id, name: doc.name } satisfies Team) : null
    },
    findTeamsByName: async (name) => (await Teams.find({ name }).sort({ _id: 1 }).lean()).map((doc) => ({ team_id: doc._id, name: doc.name })),

    async putMembership({ team_id, account_id, role }) {
      const upsert = () => Members.updateOne({ team_id, account_id }, { $set: { role } }, { upsert: true })
      // Two concurrent upserts of a new member can both try to insert; the loser's retry updates.
      await upsert().catch((error) => (isDuplicateKey(error) ? upsert() : Promise.reject(error)))
    },
    async getMembership(teamId, accountId) {
      const doc = await Members.findOne({ team_id: teamId, account_id: accountId }).lean()
      return doc ? toMembership(doc) : null
    },
    listMembers: async (teamId) => (await Members.find({ team_id: teamId }).sort({ account_id: 1 }).lean()).map(toMembership),
    removeMembership: async (teamId, accountId) =>
      (await Members.deleteOne({ team_id: teamId, account_id: accountId })).deletedCount > 0,

    async insertKey({ key_id, ...rest }) {
      try {
        const live = rest.revoked_at === null
        await Keys.create({ _id: key_id, ...rest, ...(live ? { live: true } : {}), slot: live ? liveSlot(rest.account_id, rest.scope) : revokedSlot(key_id), seq: nextSeq() })
      } catch (error) {
        if (!isDuplicateKey(error)) throw error
        if (rest.revoked_at === null && (await Keys.exists({ slot: liveSlot(rest.account_id, rest.scope), _id: { $ne: key_id } }))) {
          throw new StoreConflict('live_key', rest.account_id)
        }
        if (await Keys.exists({ hash: rest.hash, _id: { $ne: key_id } })) throw new StoreConflict('hash')
        throw new StoreConflict('key_id', key_id)
      }
    },
    getKey: async (keyId) => withUse(await Keys.findById(keyId).lean()),
    // Every request's read: the key and its use at once, no round trip more than before.
    async findKeyByHash(hash) {
      const [doc, use] = await Promise.all([Keys.findOne({ hash }).lean(), KeyUses.findById(hash).lean()])
      return doc ? usedKey(doc, use) : null
    },
    findLiveKey: async (accountId, scope: KeyScope) => withUse(await Keys.findOne({ account_id: accountId, scope, live: true }).lean()),
    // Oldest first: keys of one second in the order made (seq), as SQLite's rowid orders them; not by their random ids.
    listKeys: async (accountId) => withUses(await Keys.find({ account_id: accountId }).sort({ created_at: 1, seq: 1, _id: 1 }).lean()),
    async revokeKey(keyId, at) {
      await Keys.updateOne({ _id: keyId, live: true }, { $set: { revoked_at: at, slot: revokedSlot(keyId) }, $unset: { live: 1 } })
      return withUse(await Keys.findById(keyId).lean())
    },
    async touchKey({ hash }, at) {
      // Never the key's own document (KeyUseDoc). Where a later use is recorded, the filter misses
      // and the upsert's insert meets the taken _id: nothing to do, never backwards.
      await KeyUses.updateOne({ _id: hash, last_used_at: { $lt: at } }, { $set: { last_used_at: at } }, { upsert: true }).catch((error) => {
        if (!isDuplicateKey(error)) throw error
      })
    },

    async ping() {
      try {
        await conn.db?.admin().ping()
        return conn.readyState === 1
      } catch {
        return false
      }
    },
    // The connection is shared by every Mongo adapter of the process; its owner closes it.
    close: async () => {},
    now,
  }
}
