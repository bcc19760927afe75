import { type Connection, mongo } from 'mongoose'

const { ObjectId } = mongo
import { supportsTransactions } from '@lr/platform/mongo-insert'
import { createTally } from '../aggregates'
import { dayOf } from '../days'
import type { AnalyticsStore, StoredScan } from '../ports'
import { createMongoReads } from './analytics-reads.mongo'
import { type AnalyticsCollections, analyticsCollections } from './analytics-collections.mongo'
import { createJournaledApply, keyOf } from './analytics-journal.mongo'
import { mongoSketches } from './analytics-sketches.mongo'
import { createMongoFallbacks } from './analytics-fallbacks.mongo'
import type { AnalyticsStoreOptions } from '../range-uniques'

type Session = mongo.ClientSession | undefined

/**
 * Every aggregate document is keyed by its `_id`, the key's parts joined (keyOf): each upsert is
 * then a primary-key lookup, on MongoDB and on FerretDB alike, whose SQLite backend scans the
 * whole collection for an upsert on any other field (README "MongoDB compatibility"). The key's
 * parts stay as fields, indexed for the reads.
 */

async function createIndexes(c: AnalyticsCollections): Promise<void> {
  await Promise.all([
    c.scans.createIndex({ code: 1, scanned_at: 1, _id: 1 }),
    c.dayVisitors.createIndex({ code: 1, day: 1 }),
    c.dayTotals.createIndex({ code: 1, day: 1 }),
    c.codeDims.createIndex({ code: 1 }),
    c.dayDims.createIndex({ code: 1, day: 1 }),
    c.daySketches.createIndex({ code: 1, day: 1 }),
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

/** Counter upserts by `_id`; `fields` (the key's parts) are written when the document is created. */
const inc = <R extends { scans: number; uniques?: number }>(rows: Iterable<R>, keyOfRow: (row: R) => { _id: string; fields: object }) =>
  [...rows].map((row) => {
    const { _id, fields } = keyOfRow(row)
    const $inc = row.uniques === undefined ? { scans: row.scans } : { scans: row.scans, uniques: row.uniques }
    return { updateOne: { filter: { _id }, update: { $inc, $setOnInsert: fields }, upsert: true } }
  }) as unknown as mongo.AnyBulkWriteOperation<mongo.Document>[]

/**
 * An AnalyticsStore in MongoDB over a shared mongoose connection, on the driver's collections
 * (bulk upserts; mongoose documents would only add casting). Idempotence: a scan is stored by
 * an upsert on _id = scan_id, and only the scans that upsert created are counted. With a
 * replica set every call is one transaction; on a server without transactions the one writer
 * (the ingest lease) applies each batch through a journal instead (analytics-journal.mongo.ts),
 * so a crash half-way loses and doubles nothing either.
 */
export async function createMongoAnalyticsStore(conn: Connection, options: AnalyticsStoreOptions = {}): Promise<AnalyticsStore> {
  const c = analyticsCollections(conn.db!)
  await createIndexes(c)
  const transactions = await supportsTransactions(conn)
  const sketches = mongoSketches(c)
  const journaled = transactions ? undefined : createJournaledApply(conn.db!, c, sketches)
  await journaled?.recover()
  const fallbacks = await createMongoFallbacks(conn.db!)

  async function apply(scans: StoredScan[], session: Session): Promise<number> {
    const created = await insertNew(c.scans, scans.map(({ scan_id, ...rest }) => ({ key: { _id: scan_id }, rest })), session)
    const fresh = scans.filter((_, i) => created.has(i))
    const days = fresh.map((s) => dayOf(s.scanned_at))
    const visitors = await insertNew(c.codeVisitors, fresh.map((s) => ({ key: { _id: keyOf(s.code, s.visitor_id) }, rest: { code: s.code, visitor_id: s.visitor_id } })), session)
    const dayVisitors = await insertNew(c.dayVisitors, fresh.map((s, i) => ({ key: { _id: keyOf(s.code, days[i]!, s.visitor_id) }, rest: { code: s.code, day: days[i], visitor_id: s.visitor_id } })), session)
    await sketches.add(fresh.filter((_, i) => dayVisitors.has(i)).map((s) => ({ code: s.code, day: dayOf(s.scanned_at), visitor_id: s.visitor_id })), session)
    const tally = createTally()
    fresh.forEach((scan, i) => tally.add(scan, days[i]!, visitors.has(i), dayVisitors.has(i)))
    // One operation at a time: a transaction's session must not run operations concurrently.
    const write = async (collection: mongo.Collection<any>, ops: mongo.AnyBulkWriteOperation<mongo.Document>[]) => {
      if (ops.length > 0) await collection.bulkWrite(ops, { ordered: false, session })
    }
    await write(c.codeTotals, inc(tally.codes.values(), (r) => ({ _id: r.code, fields: {} })))
    await write(c.dayTotals, inc(tally.days.values(), (r) => ({ _id: keyOf(r.code, r.day), fields: { code: r.code, day: r.day } })))
    await write(c.codeDims, inc(tally.codeDims.values(), (r) => ({ _id: keyOf(r.code, r.dim, r.value), fields: { code: r.code, dim: r.dim, value: r.value } })))
    await write(c.dayDims, inc(tally.dayDims.values(), (r) => ({ _id: keyOf(r.code, r.day, r.dim, r.value), fields: { code: r.code, day: r.day, dim: r.dim, value: r.value } })))
    return fresh.length
  }

  return {
    async applyScans(scans, writing) {
      if (scans.length === 0) return 0
      if (journaled) {
        await journaled.recover()
        return journaled.apply(scans, writing)
      }
      let fresh = 0
      await conn.transaction(async (session) => {
        fresh = await apply(scans, session)
      })
      return fresh
    },
    ...createMongoReads(c, sketches, options),
    ...fallbacks,
    async ping() {
      return conn.readyState === 1 && (await conn.db!.admin().ping().then(() => true, () => false))
    },
  }
}
