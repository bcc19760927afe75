import { describe, expect, it } from 'bun:test'
import { supportsTransactions } from '@lr/platform/mongo-insert'
import { analyticsCollections } from '../src/adapters/analytics-collections.mongo'
import { createJournaledApply } from '../src/adapters/analytics-journal.mongo'
import { mongoSketches } from '../src/adapters/analytics-sketches.mongo'
import { ALL_TIME } from '../src/days'
import { DAY, scan, T0, visitor } from './fixtures'
import { SKETCH_MIN_VISITORS } from '../src/sketch'
import { createMongoAnalyticsStore } from '../src/adapters/analytics-store.mongo'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../../test/harness/ferretdb'
import { analyticsStoreContract } from './analytics-store.contract'

// FerretDB started by the harness, or MONGODB_URL; see README "MongoDB compatibility".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo analytics store suite: ${skip}`)

describe.skipIf(Boolean(skip))('AnalyticsStore on MongoDB', () => {
  const url = useMongoServer()
  analyticsStoreContract(async (options) => {
    const db = await freshDatabase(url(), 'lr_analytics_test')
    return { store: await createMongoAnalyticsStore(db.conn, options), cleanup: db.cleanup }
  })
})

// A writer killed (kill -9) half-way through a batch on a server without transactions: the
// journal lets the next writer finish it, losing and doubling nothing.
describe.skipIf(Boolean(skip))('AnalyticsStore on MongoDB without transactions, after a writer died', () => {
  const url = useMongoServer()
  const batch = Array.from({ length: 12 }, (_, n) => scan(n, { visitor_id: visitor(n % 4) }))
  const expected = { total_scans: 12, unique_scans: 4 }

  async function withJournal(stopAfter: (parts: ReturnType<typeof createJournaledApply>, entry: Awaited<ReturnType<ReturnType<typeof createJournaledApply>['plan']>>) => Promise<void>) {
    const db = await freshDatabase(url(), 'lr_analytics_journal_test')
    try {
      if (await supportsTransactions(db.conn)) return // a replica set commits a batch whole instead
      await createMongoAnalyticsStore(db.conn) // collections and indexes
      const collections = analyticsCollections(db.conn.db!)
      const parts = createJournaledApply(db.conn.db!, collections, mongoSketches(collections))
      const entry = await parts.plan(batch)
      await parts.journal.replaceOne({ _id: 'inflight' }, entry, { upsert: true })
      await stopAfter(parts, entry)
      // The next writer: a new store on the same database.
      const next = await createMongoAnalyticsStore(db.conn)
      expect(await next.breakdown(batch[0]!.code, ALL_TIME)).toMatchObject(expected)
      expect(await next.applyScans(batch)).toBe(0) // delivered again: already counted
      expect(await next.breakdown(batch[0]!.code, ALL_TIME)).toMatchObject(expected)
    } finally {
      await db.cleanup()
    }
  }

  it('finishes a batch whose writer died after storing the raw scans', async () => {
    await withJournal(async (parts, entry) => {
      await analyticsCollections(parts.journal.db).scans.insertMany(entry.scans)
    })
  })

  // A writer paused past its ingest lease (SIGSTOP, a frozen VM) wakes in the middle of a batch
  // the new holder has since applied: what it goes on writing would count those scans again.
  it('writes nothing for a writer no longer writing (its lease lapsed), and rejects', async () => {
    const db = await freshDatabase(url(), 'lr_analytics_lapsed_test')
    try {
      if (await supportsTransactions(db.conn)) return // a replica set commits a batch whole instead
      const store = await createMongoAnalyticsStore(db.conn)
      let asked = 0
      const lapsed = () => (asked++, false)
      await expect(store.applyScans(batch, lapsed)).rejects.toThrow('the ingest lease lapsed')
      expect(asked).toBeGreaterThan(0)
      expect(await store.breakdown(batch[0]!.code, ALL_TIME)).toMatchObject({ total_scans: 0 })
      expect(await analyticsCollections(db.conn.db!).scans.countDocuments()).toBe(0)
      // The new holder applies the batch: once.
      expect(await store.applyScans(batch)).toBe(12)
      expect(await store.breakdown(batch[0]!.code, ALL_TIME)).toMatchObject(expected)
    } finally {
      await db.cleanup()
    }
  })

  it('does not count twice a batch whose writer died before clearing its journal', async () => {
    await withJournal(async (parts, entry) => {
      await parts.play(entry)
      await parts.journal.replaceOne({ _id: 'inflight' }, entry, { upsert: true })
    })
  })
})

// One process (`bun start`) hands analytics everything waiting in one call: after a burst on a
// slow store, or from the spool at the next start, tens of thousands of scans. Without
// transactions each call had one journal entry, a document, and past ~25,000 scans of distinct
// visitors it outgrew MongoDB's 16 MiB document limit: the write failed, and the same batch was
// retried for ever (a probe: 60,887 scans from the spool, `The value of "offset" is out of
// range`, the code's total frozen at 24,009 of 64,947). Here fewer scans with long visitor ids
// (in the scan, its visitor and its day visitor) make an entry as large, to keep the test short.
describe.skipIf(Boolean(skip))('AnalyticsStore on MongoDB without transactions, a call larger than one journal document', () => {
  const url = useMongoServer()

  it('applies a call whose journal would pass 16 MiB, each scan once', async () => {
    const db = await freshDatabase(url(), 'lr_analytics_big_call_test')
    try {
      if (await supportsTransactions(db.conn)) return // a replica set writes the call in one transaction, no journal
      const store = await createMongoAnalyticsStore(db.conn)
      const batch = Array.from({ length: 2_500 }, (_, n) => scan(n, { visitor_id: visitor(n + 1).repeat(32) }))
      expect(await store.applyScans(batch)).toBe(2_500)
      expect(await store.summary([batch[0]!.code], ALL_TIME)).toEqual([{ code: batch[0]!.code, total_scans: 2_500, unique_scans: 2_500 }])
      expect(await store.applyScans(batch.slice(0, 5))).toBe(0) // delivered again: already counted
    } finally {
      await db.cleanup()
    }
  }, 60_000)
})

// As on SQLite (analytics-sketches.sqlite.test.ts): a sketch is 16 KiB whatever it holds, so only
// a day of more than SKETCH_MIN_VISITORS visitors has one stored; a smaller one is built from its
// visitor documents when a range needs it, and not stored then either.
describe.skipIf(Boolean(skip))('AnalyticsStore on MongoDB, day sketches only above SKETCH_MIN_VISITORS', () => {
  const url = useMongoServer()
  const dayScans = (day: number, visitors: number, first: number) =>
    Array.from({ length: visitors }, (_, i) => scan(first + i, { scanned_at: T0 + day * DAY, visitor_id: visitor(day * 10_000 + i) }))

  it('stores none for a small day, one once a day passes the bound, and estimates over both', async () => {
    const db = await freshDatabase(url(), 'lr_analytics_sketch_bound_test')
    try {
      const store = await createMongoAnalyticsStore(db.conn, { exactVisitorDays: 50 })
      const sketchDays = async () => (await analyticsCollections(db.conn.db!).daySketches.find({}).toArray()).map((d) => d.day).sort()
      const small = dayScans(0, SKETCH_MIN_VISITORS, 0)
      const crossing = dayScans(1, SKETCH_MIN_VISITORS + 1, 20_000)
      const half = SKETCH_MIN_VISITORS / 2
      await store.applyScans([...small, ...crossing.slice(0, half), scan(90_000, { scanned_at: T0 + 4 * DAY })])
      expect(await sketchDays()).toEqual([])
      await store.applyScans(crossing.slice(half))
      expect(await sketchDays()).toEqual(['2025-01-11'])
      const distinct = small.length + crossing.length
      const breakdown = await store.breakdown('Code0001', { from: '2025-01-10', to: '2025-01-11' })
      expect(Math.abs(breakdown.unique_scans - distinct)).toBeLessThanOrEqual(Math.ceil(distinct * 0.02))
      expect(await sketchDays()).toEqual(['2025-01-11'])
    } finally {
      await db.cleanup()
    }
  }, 60_000)
})
