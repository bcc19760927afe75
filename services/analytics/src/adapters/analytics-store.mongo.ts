import { type Connection, mongo } from 'mongoose'

const { ObjectId } = mongo
import { supportsTransactions } from '@lr/platform/mongo-insert'
import { createTally } from '../aggregates'
import { dayOf } from '../days'
import type { AnalyticsStore, StoredScan } from '../ports'
import { createMongoReads } from './analytics-reads.mongo'
import { type AnalyticsCollections, analyticsCollections } from './analytics-collections.mongo'

type Session = mongo.ClientSession | undefined

async function createIndexes(c: AnalyticsCollections): Promise<void> {
  await Promise.all([
    c.scans.createIndex({ code: 1, scanned_at: 1, _id: 1 }),
    c.codeVisitors.createIndex({ code: 1, visitor_id: 1 }, { unique: true }),
    c.dayVisitors.createIndex({ code: 1, day: 1, visitor_id: 1 }, { unique: true }),
    c.dayTotals.createIndex({ code: 1, day: 1 }, { unique: true }),
    c.codeDims.createIndex({ code: 1, dim: 1, value: 1 }, { unique: true }),
    c.dayDims.createIndex({ code: 1, day: 1, dim: 1, value: 1 }, { unique: true }),
  ])
}

/**
 * Inserts each document unless one with its key exists: upserts in order, so a key repeated in
 * the call is created once. `rest` holds the fields beyond the key. The positions of those created.
 * Which upserts created a document is read from the `_id`s the server reports, never from its
 * op indexes (FerretDB v1 numbers those wrongly; README "MongoDB compatibility"): a key with its
 * own `_id` (a scan's scan_id) is matched to its first op, any other key gets a fresh ObjectId.
 */
async function insertNew<T extends mongo.Document>(collection: mongo.Collection<T>, docs: { key: object; rest?: object }[], session: Session): Promise<Set<number>> {
  if (docs.length === 0) return new Set()
  const ownIds = docs.map(({ key }) => ('_id' in key ? undefined : new ObjectId()))
  const ids = docs.map(({ key }, i) => ownIds[i] ?? (key as { _id: unknown })._id)
  const ops = docs.map(({ key, rest }, i) => ({
    updateOne: { filter: key, update: { $setOnInsert: { ...(rest ?? key), ...(ownIds[i] && { _id: ownIds[i] }) } }, upsert: true },
  })) as unknown as mongo.AnyBulkWriteOperation<T>[]
  const result = await collection.bulkWrite(ops, { ordered: true, session })
  const upserted = new Set(Object.values(result.upsertedIds).map(String))
  const created = new Set<number>()
  ids.forEach((id, i) => {
    if (upserted.delete(String(id))) created.add(i)
  })
  return created
}

const inc = <T extends mongo.Document>(rows: Iterable<{ scans: number; uniques?: number }>, filterOf: (row: never) => mongo.Filter<T>) =>
  [...rows].map((row) => ({
    updateOne: { filter: filterOf(row as never), update: { $inc: row.uniques === undefined ? { scans: row.scans } : { scans: row.scans, uniques: row.uniques } }, upsert: true },
  })) as unknown as mongo.AnyBulkWriteOperation<T>[]

/**
 * An AnalyticsStore in MongoDB over a shared mongoose connection, on the driver's collections
 * (bulk upserts; mongoose documents would only add casting). Idempotence: a scan is stored by
 * an upsert on _id = scan_id, and only the scans that upsert created are counted. With a
 * replica set every call is one transaction; on a standalone server a crash between the scan
 * upserts and the counter updates leaves that batch's aggregates short (raw scans are kept).
 */
export async function createMongoAnalyticsStore(conn: Connection): Promise<AnalyticsStore> {
  const c = analyticsCollections(conn.db!)
  await createIndexes(c)
  const transactions = await supportsTransactions(conn)

  async function apply(scans: StoredScan[], session: Session): Promise<number> {
    const created = await insertNew(c.scans, scans.map(({ scan_id, ...rest }) => ({ key: { _id: scan_id }, rest })), session)
    const fresh = scans.filter((_, i) => created.has(i))
    const days = fresh.map((s) => dayOf(s.scanned_at))
    const visitors = await insertNew(c.codeVisitors, fresh.map((s) => ({ key: { code: s.code, visitor_id: s.visitor_id } })), session)
    const dayVisitors = await insertNew(c.dayVisitors, fresh.map((s, i) => ({ key: { code: s.code, day: days[i], visitor_id: s.visitor_id } })), session)
    const tally = createTally()
    fresh.forEach((scan, i) => tally.add(scan, days[i]!, visitors.has(i), dayVisitors.has(i)))
    // One operation at a time: a transaction's session must not run operations concurrently.
    const write = async <T extends mongo.Document>(collection: mongo.Collection<T>, ops: mongo.AnyBulkWriteOperation<T>[]) => {
      if (ops.length > 0) await collection.bulkWrite(ops, { ordered: false, session })
    }
    await write(c.codeTotals, inc(tally.codes.values(), (r: { code: string }) => ({ _id: r.code })))
    await write(c.dayTotals, inc(tally.days.values(), (r: { code: string; day: string }) => ({ code: r.code, day: r.day })))
    await write(c.codeDims, inc(tally.codeDims.values(), (r: { code: string; dim: string; value: string }) => ({ code: r.code, dim: r.dim, value: r.value })))
    await write(c.dayDims, inc(tally.dayDims.values(), (r: { code: string; day: string; dim: string; value: string }) => ({ code: r.code, day: r.day, dim: r.dim, value: r.value })))
    return fresh.length
  }

  return {
    async applyScans(scans) {
      if (scans.length === 0) return 0
      if (!transactions) return apply(scans, undefined)
      let fresh = 0
      await conn.transaction(async (session) => {
        fresh = await apply(scans, session)
      })
      return fresh
    },
    ...createMongoReads(c),
    async ping() {
      return conn.readyState === 1 && (await conn.db!.admin().ping().then(() => true, () => false))
    },
  }
}
