import { mongo } from 'mongoose'
import { bulkUpsert, onlyDuplicateKeys } from '@lr/platform/mongo-bulk'
import { createTally } from '../aggregates'
import { dayOf } from '../days'
import type { StoredScan } from '../ports'
import type { AnalyticsCollections } from './analytics-collections.mongo'

/**
 * Exactly-once scan aggregates on a server without transactions (README "MongoDB
 * compatibility"), for the one replica that holds the ingest lease. Before writing anything the
 * writer records the whole batch's effect in a journal document: which scans and visitors are
 * new, and every counter increment, each tagged with the batch's id. Then it writes them, each
 * write idempotent (inserts ignore a duplicate key, a visitor sketch takes a visitor twice, a counter's `$inc` also sets its `batch`
 * and skips a document already carrying it), and removes the journal. A writer that dies
 * half-way (kill -9) leaves the journal; the next writer replays it first, so no increment is
 * lost and none is applied twice.
 */
export const keyOf = (...parts: string[]) => parts.join('\u0000')

/**
 * Journal bytes one part of a call may take, estimated before it is planned. One process hands
 * analytics everything waiting in one call (tens of thousands of scans after a burst on a slow
 * store, or from the spool at a start), and one entry for all of them outgrew MongoDB's 16 MiB
 * document limit at about 25,000 scans of distinct visitors: its write failed, and the same
 * batch was retried for ever. So a call is journaled in parts, each exactly once like a batch.
 */
const JOURNAL_PART_BYTES = 4 * 1024 * 1024

/**
 * What a scan may add to its part's entry: its document, and at most its visitor, its day visitor
 * and ten counters, which carry its code, day, visitor and dimension values. Measured on parts of
 * 2,900 scans as the resolver makes them (249 bytes, a weight of 1.5 KB): an entry of 1.9 MB for
 * one code, 6.9 MB when every scan brings a code, day and values of its own (every counter new).
 */
const journalWeight = (scan: StoredScan): number => 6 * mongo.BSON.calculateObjectSize(scan)

/** The batch cut in order into parts of at most JOURNAL_PART_BYTES of weight (a heavier scan alone). */
function partsOf(scans: StoredScan[]): StoredScan[][] {
  const parts: StoredScan[][] = []
  let part: StoredScan[] = []
  let bytes = 0
  for (const scan of scans) {
    const weight = journalWeight(scan)
    if (part.length > 0 && bytes + weight > JOURNAL_PART_BYTES) {
      parts.push(part)
      part = []
      bytes = 0
    }
    part.push(scan)
    bytes += weight
  }
  if (part.length > 0) parts.push(part)
  return parts
}

interface CounterOp {
  collection: 'codeTotals' | 'dayTotals' | 'codeDims' | 'dayDims'
  _id: string
  fields: Record<string, string>
  inc: { scans: number; uniques?: number }
}

interface JournalDoc {
  _id: 'inflight'
  batch: string
  scans: (Omit<StoredScan, 'scan_id'> & { _id: string })[]
  visitors: { _id: string; code: string; visitor_id: string }[]
  dayVisitors: { _id: string; code: string; day: string; visitor_id: string }[]
  counters: CounterOp[]
}

const onlyDuplicates = (error: unknown) => {
  if (!onlyDuplicateKeys(error)) throw error
}

/** Where a batch's new day visitors enter their days' sketches (analytics-sketches.mongo.ts). */
interface SketchAdder {
  add(newDayVisitors: { code: string; day: string; visitor_id: string }[], session: undefined): Promise<void>
}

export function createJournaledApply(db: mongo.Db, c: AnalyticsCollections, sketches: SketchAdder) {
  const journal = db.collection<JournalDoc>('analytics_journal')

  /** Which of `ids` are stored in `collection` already. */
  const existing = async (collection: mongo.Collection<any>, ids: string[]) =>
    new Set(ids.length === 0 ? [] : (await collection.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id)))

  async function plan(scans: StoredScan[]): Promise<JournalDoc> {
    const stored = await existing(c.scans, scans.map((s) => s.scan_id))
    const seen = new Set<string>()
    const fresh = scans.filter((s) => !stored.has(s.scan_id) && !seen.has(s.scan_id) && seen.add(s.scan_id))
    const days = fresh.map((s) => dayOf(s.scanned_at))
    const visitorIds = fresh.map((s) => keyOf(s.code, s.visitor_id))
    const dayVisitorIds = fresh.map((s, i) => keyOf(s.code, days[i]!, s.visitor_id))
    const [knownVisitors, knownDayVisitors] = await Promise.all([existing(c.codeVisitors, visitorIds), existing(c.dayVisitors, dayVisitorIds)])
    const tally = createTally()
    const visitors: JournalDoc['visitors'] = []
    const dayVisitors: JournalDoc['dayVisitors'] = []
    fresh.forEach((scan, i) => {
      const newVisitor = !knownVisitors.has(visitorIds[i]!)
      const newDayVisitor = !knownDayVisitors.has(dayVisitorIds[i]!)
      if (newVisitor) {
        knownVisitors.add(visitorIds[i]!)
        visitors.push({ _id: visitorIds[i]!, code: scan.code, visitor_id: scan.visitor_id })
      }
      if (newDayVisitor) {
        knownDayVisitors.add(dayVisitorIds[i]!)
        dayVisitors.push({ _id: dayVisitorIds[i]!, code: scan.code, day: days[i]!, visitor_id: scan.visitor_id })
      }
      tally.add(scan, days[i]!, newVisitor, newDayVisitor)
    })
    const counters: CounterOp[] = [
      ...[...tally.codes.values()].map((r) => ({ collection: 'codeTotals' as const, _id: r.code, fields: {}, inc: { scans: r.scans, uniques: r.uniques } })),
      ...[...tally.days.values()].map((r) => ({ collection: 'dayTotals' as const, _id: keyOf(r.code, r.day), fields: { code: r.code, day: r.day }, inc: { scans: r.scans, uniques: r.uniques } })),
      ...[...tally.codeDims.values()].map((r) => ({ collection: 'codeDims' as const, _id: keyOf(r.code, r.dim, r.value), fields: { code: r.code, dim: r.dim, value: r.value }, inc: { scans: r.scans } })),
      ...[...tally.dayDims.values()].map((r) => ({ collection: 'dayDims' as const, _id: keyOf(r.code, r.day, r.dim, r.value), fields: { code: r.code, day: r.day, dim: r.dim, value: r.value }, inc: { scans: r.scans } })),
    ]
    const rawScans = fresh.map(({ scan_id, ...rest }) => ({ _id: scan_id, ...rest }))
    return { _id: 'inflight', batch: crypto.randomUUID(), scans: rawScans, visitors, dayVisitors, counters }
  }

  /**
   * Writes a journal's effect; every write may already have happened and is then skipped.
   * `mine` is asked before each write (see apply).
   */
  async function play(entry: JournalDoc, mine: () => void = () => undefined): Promise<void> {
    const insert = async (collection: mongo.Collection<any>, docs: object[]) => {
      mine()
      if (docs.length > 0) await collection.insertMany(docs, { ordered: false }).catch(onlyDuplicates)
    }
    await insert(c.scans, entry.scans)
    await insert(c.codeVisitors, entry.visitors)
    await insert(c.dayVisitors, entry.dayVisitors)
    mine()
    await sketches.add(entry.dayVisitors, undefined)
    for (const name of ['codeTotals', 'dayTotals', 'codeDims', 'dayDims'] as const) {
      const ops = entry.counters.filter((op) => op.collection === name).map((op) => ({
        updateOne: { filter: { _id: op._id, batch: { $ne: entry.batch } }, update: { $inc: op.inc, $set: { batch: entry.batch }, $setOnInsert: op.fields }, upsert: true },
      }))
      // A counter already tagged with this batch fails its upsert on the _id: it was applied.
      // In short commands: a batch's counters are mostly documents that exist (mongo-bulk.ts).
      await bulkUpsert(c[name] as mongo.Collection<any>, ops, mine)
    }
    await journal.deleteOne({ _id: 'inflight', batch: entry.batch })
  }

  return {
    /** Finishes what a writer that died left in the journal. */
    async recover(): Promise<void> {
      const left = await journal.findOne({ _id: 'inflight' })
      if (left) await play(left)
    },
    /** The parts, for tests that stop a writer half-way. */
    plan,
    play,
    journal,
    /**
     * Applies a batch exactly once, part after part (partsOf): a part plans against what those
     * before it stored, so a scan or visitor repeated across parts counts once. The number of
     * scans it counted. A failure leaves the parts before it applied; the batch delivered again
     * counts only the rest.
     */
    async apply(scans: StoredScan[], writing?: () => boolean): Promise<number> {
      // A writer paused past its lease wakes up in the middle of this: the new holder has replayed
      // its journal and gone on, so a counter's batch tag no longer stops a second increment, and
      // a plan made before the pause counts scans the new holder stored since. It stops at its
      // next write (the one under way when it stopped was sent while it held the lease).
      const mine = () => {
        if (writing && !writing()) throw new Error('the ingest lease lapsed: another analytics replica applies these scans')
      }
      let counted = 0
      for (const part of partsOf(scans)) {
        const entry = await plan(part)
        mine()
        await journal.replaceOne({ _id: 'inflight' }, entry, { upsert: true })
        await play(entry, mine)
        counted += entry.scans.length
      }
      return counted
    },
  }
}
