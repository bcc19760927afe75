import type { Connection } from 'mongoose'
import type { WebhookAttempt } from '@lr/proto'
import { mongoReceipts } from '@lr/platform/idempotency-mongo'
import { databaseNow } from '@lr/platform/mongo-clock'
import { bulkUpsert, onlyDuplicateKeys } from '@lr/platform/mongo-bulk'
import { mongoEndpointPlaces } from './endpoint-places.mongo'
import { EndpointLimitReached, type StoredAttempt, type StoredEndpoint, type StoredMessage, type WebhookStore } from '../ports'

type EndpointDoc = Omit<StoredEndpoint, 'id'> & { _id: string; seq: number }
type MessageDoc = Omit<StoredMessage, 'id'> & { _id: string }
type AttemptDoc = StoredAttempt & { seq: number }

const endpointOf = ({ _id, seq: _seq, ...doc }: EndpointDoc): StoredEndpoint => ({ ...doc, id: _id })
const messageOf = ({ _id, ...doc }: MessageDoc): StoredMessage => ({ ...doc, id: _id })
const ATTEMPT_FIELDS = { _id: 0, endpoint_id: 0, seq: 0 } as const

/**
 * How old a claim's key must be, its message still due at the claimed time, before the claim is
 * taken for a dead worker's (moveOnFromDeadClaim): far longer than its two writes ever take apart,
 * even on a loaded FerretDB (seconds).
 */
export const DEAD_CLAIM_MS = 30_000

/** The endpoints' collection: what a pending receipt of this store names (PendingWrite.in). */
const ENDPOINTS = 'webhook_endpoints'

/**
 * The webhooks store on MongoDB. `seq` of an endpoint or attempt orders them (a time-ordered
 * number: milliseconds and a counter). A claim is a unique-key insert (`webhook_claims`, one per
 * message and due time), not a compare-and-set: FerretDB lets several compare-and-set writers win
 * (README "MongoDB compatibility") but enforces unique keys, so one worker wins on both servers.
 *
 * An endpoint created with an Idempotency-Key goes receipt first, as record inserts do without
 * transactions (platform/src/mongo-insert.ts): the receipt names the endpoint's document, the
 * endpoint follows, then the receipt is settled. Its `_id` is the endpoint's own id, so a reader
 * finishing a dead writer's create (findReceipt) never writes it twice: the second is a 11000.
 */
export async function createMongoWebhookStore(conn: Connection): Promise<WebhookStore> {
  const db = conn.db!
  const endpoints = db.collection<EndpointDoc>(ENDPOINTS)
  const messages = db.collection<MessageDoc>('webhook_messages')
  const attempts = db.collection<AttemptDoc>('webhook_attempts')
  const claims = db.collection<{ _id: string; at: number }>('webhook_claims')
  await endpoints.createIndex({ library: 1, seq: 1 })
  // Due order with the endpoint in the key: MongoDB passes a skipped endpoint's due messages over
  // in the index scan, fetching none (due's `skip`). FerretDB 1 (SQLite) reads the collection
  // whole for either query.
  await messages.createIndex({ state: 1, next_attempt_at: 1, endpoint_id: 1 })
  // An endpoint's messages (deletes, giving up) and its due ones in order (dueOf).
  await messages.createIndex({ endpoint_id: 1, state: 1, next_attempt_at: 1 })
  // What these two replace: dropped, so that a write keeps two message indexes up to date, not four.
  for (const replaced of ['state_1_next_attempt_at_1', 'endpoint_id_1']) {
    await messages.dropIndex(replaced).catch((error) => {
      if ((error as { code?: number }).code !== 27) throw error // IndexNotFound: dropped before, or a new database
    })
  }
  await attempts.createIndex({ endpoint_id: 1, seq: -1 })
  const now = await databaseNow(conn)
  const receipts = await mongoReceipts(conn)
  const places = await mongoEndpointPlaces(db, ENDPOINTS, now)
  /** Inserts an endpoint's document; a duplicate key (11000) means it is there already. */
  const insertOnce = (doc: EndpointDoc) => endpoints.insertOne(doc).catch((error) => {
    if (!onlyDuplicateKeys(error)) throw error
  })
  /**
   * A claim is two writes: the claim's key, then the message's due time. A worker killed between
   * them (or whose second write failed: the server went away) left a key that refuses every
   * later claim of the message at that due time, which then never changes: the message was
   * never sent again, and stayed first in every due look (a probe: 2 of 400 after 12 kill -9s).
   * Once such a key is older than any claim's two writes take, the message is moved on by 1 ms,
   * a new due time whose key is free: the next look claims it. Every worker that sees the dead
   * key sets the same time, so several doing it at once (FerretDB lets several such writers win)
   * come to the same thing; a claimant that was only slow finds its due time gone and sends
   * nothing, or got there first and the move matches nothing.
   */
  async function moveOnFromDeadClaim(id: string, expected: number, key: string): Promise<void> {
    const claim = await claims.findOne({ _id: key })
    if (!claim || claim.at > now() - DEAD_CLAIM_MS) return
    await messages.updateOne({ _id: id, state: 'pending', next_attempt_at: expected }, { $set: { next_attempt_at: expected + 1 } })
  }
  const dropRemains = async (endpointId: string) => {
    await messages.deleteMany({ endpoint_id: endpointId })
    await attempts.deleteMany({ endpoint_id: endpointId })
  }
  let last = 0
  // Unique within this process and increasing; across processes ordered by time.
  const nextSeq = () => (last = Math.max(last + 1, now() * 1000))

  return {
    async insertEndpoint({ id, ...endpoint }, receipt, limit = Number.POSITIVE_INFINITY) {
      const doc: EndpointDoc = { _id: id, ...endpoint, seq: nextSeq() }
      // A place of the library's limit first (endpoint-places.mongo.ts), given back should the create fail.
      if (Number.isFinite(limit) && !(await places.take(doc.library, id, limit))) throw new EndpointLimitReached()
      const held = now()
      try {
        // Throws ReceiptTaken on a live twin, before anything of this create is stored.
        if (receipt) await receipts.write(receipt, undefined, { write: { in: ENDPOINTS, docs: [doc] }, at: held })
      } catch (error) {
        await places.release(id)
        throw error
      }
      try {
        await endpoints.insertOne(doc)
      } catch (error) {
        // A lost answer may hide an insert that happened; a duplicate id is another endpoint's, left alone.
        const undo = async () => {
          if (onlyDuplicateKeys(error)) return
          await endpoints.deleteOne({ _id: id })
          await places.release(id)
        }
        // Unless a reader took the receipt over (this writer stalled): then the endpoint is its.
        await (receipt ? receipts.takeBack(receipt, held, now(), undo) : undo())
        throw error
      }
      if (receipt) await receipts.settle(receipt.scope, receipt.key)
    },
    findReceipt(scope, key, since) {
      return receipts.findFinished(scope, key, since, now, ENDPOINTS, async (_receipt, write) => {
        for (const doc of write.docs ?? []) await insertOnce(doc as EndpointDoc)
        await receipts.settle(scope, key)
        return 'done'
      })
    },
    async listEndpoints(library) {
      return (await endpoints.find({ library }).sort({ seq: 1 }).toArray()).map(endpointOf)
    },
    async getEndpoint(library, id) {
      const doc = await endpoints.findOne({ _id: id, library })
      return doc ? endpointOf(doc) : null
    },
    async deleteEndpoint(library, id) {
      const { deletedCount } = await endpoints.deleteOne({ _id: id, library })
      if (deletedCount === 0) return false
      // Orphans of a crash between these: a place is freed by the next create that finds the
      // library full, messages by the worker when it finds their endpoint gone (dropRemains).
      await places.release(id)
      await dropRemains(id)
      return true
    },
    dropRemains,
    async subscribers(library, type) {
      return (await endpoints.find({ library, status: 'enabled', events: type }).sort({ seq: 1 }).toArray()).map(endpointOf)
    },
    async disableEndpoint(id, at) {
      await endpoints.updateOne({ _id: id, status: 'enabled' }, { $set: { status: 'disabled', disabled_at: at } })
      await messages.updateMany({ endpoint_id: id, state: 'pending' }, { $set: { state: 'failed', next_attempt_at: null } })
    },
    async enqueue(list) {
      if (list.length === 0) return
      const ops = list.map(({ id, ...message }) => ({ updateOne: { filter: { _id: id }, update: { $setOnInsert: message }, upsert: true } }))
      // Two replicas upserting one message at once: the loser's duplicate key means it is stored.
      // In short commands: a redelivered batch of scans matches every message (mongo-bulk.ts).
      await bulkUpsert(messages, ops)
    },
    async due(now, limit, skip = []) {
      const filter = { state: 'pending' as const, next_attempt_at: { $lte: now }, ...(skip.length > 0 && { endpoint_id: { $nin: [...skip] } }) }
      return (await messages.find(filter).sort({ next_attempt_at: 1 }).limit(limit).toArray()).map(messageOf)
    },
    async dueOf(endpointId, now, limit) {
      return (await messages.find({ endpoint_id: endpointId, state: 'pending', next_attempt_at: { $lte: now } }).sort({ next_attempt_at: 1 }).limit(limit).toArray()).map(messageOf)
    },
    async claim(id, expected, until) {
      const key = `${id}@${expected}`
      try {
        await claims.insertOne({ _id: key, at: now() })
      } catch (error) {
        if (!onlyDuplicateKeys(error)) throw error
        await moveOnFromDeadClaim(id, expected, key)
        return null
      }
      const doc = await messages.findOneAndUpdate(
        { _id: id, state: 'pending', next_attempt_at: expected },
        { $set: { next_attempt_at: until }, $inc: { attempts: 1 } },
        { returnDocument: 'after' },
      )
      return doc ? messageOf(doc) : null
    },
    async settle(message, attempt, keep) {
      const { matchedCount } = await messages.updateOne({ _id: message.id }, { $set: { state: message.state, next_attempt_at: message.next_attempt_at } })
      if (matchedCount === 0) return
      if (message.state === 'delivered') {
        await endpoints.updateOne({ _id: message.endpoint_id, $or: [{ last_success_at: null }, { last_success_at: { $lt: attempt.attempted_at } }] }, { $set: { last_success_at: attempt.attempted_at } })
      }
      await attempts.insertOne({ ...attempt, seq: nextSeq() })
      const oldest = await attempts.find({ endpoint_id: attempt.endpoint_id }, { projection: { seq: 1 } }).sort({ seq: -1 }).skip(keep).limit(1).toArray()
      if (oldest[0]) await attempts.deleteMany({ endpoint_id: attempt.endpoint_id, seq: { $lte: oldest[0].seq } })
    },
    async purge(before) {
      await claims.deleteMany({ at: { $lt: before } })
      return (await messages.deleteMany({ state: { $ne: 'pending' }, created_at: { $lt: before } })).deletedCount
    },
    async attempts(endpointId, limit) {
      return (await attempts.find({ endpoint_id: endpointId }, { projection: ATTEMPT_FIELDS }).sort({ seq: -1 }).limit(limit).toArray()) as unknown as WebhookAttempt[]
    },
    async ping() {
      await db.command({ ping: 1 })
      return true
    },
    now,
  }
}
