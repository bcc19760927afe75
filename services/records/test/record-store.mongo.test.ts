import { describe, expect, it } from 'bun:test'
import { createMongoRecordStore, STATIC_MONGO } from '../src/adapters/record-store.mongo'
import type { RecordStore, StaticPatch } from '../src/ports'
import type { AppError, StaticRecord } from '@lr/proto'
import { receiptContract } from '@lr/platform/testing/receipts'
import { captureLog } from '@lr/platform/testing/log-capture'
import { libraryStoreContract } from '@lr/library-records/testing/store-contract'
import { concurrentPagingContract } from '@lr/platform/testing/concurrent-paging'
import { concurrentWritesContract } from '@lr/library-records/testing/concurrent-writes'
import { connectMongo } from '@lr/platform/mongo'
import { createMongoLibraryStore, runOnce } from '@lr/library-records/mongo'
import { CLAIM_GRACE_MS } from '@lr/library-records/mongo-version-claims'
import { asHandlerOf } from '@lr/platform/request-context'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../../test/harness/ferretdb'
import { A, record, staticFixture } from './record-store.fixtures'

// FerretDB started by the harness, or MONGODB_URL; see README "MongoDB compatibility".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo record store suites: ${skip}`)

describe.skipIf(Boolean(skip))('RecordStore on MongoDB', () => {
  const url = useMongoServer()
  libraryStoreContract(staticFixture, async () => {
    const db = await freshDatabase(url(), 'lr_records_test')
    return { store: await createMongoRecordStore(db.conn), cleanup: db.cleanup }
  })

  it('gives documents stored before tombstones and change positions (no deleted_at, no rev) their change positions', async () => {
    const db = await freshDatabase(url(), 'lr_records_old')
    try {
      await (await createMongoRecordStore(db.conn)).insertMany(A, [record(1), record(2), record(3)])
      // A database from before: no rev, no deleted_at, and no record that rev was backfilled.
      await db.conn.db!.collection('static_records').updateMany({}, { $unset: { rev: '', deleted_at: '' } })
      await db.conn.db!.collection('migrations').deleteMany({})
      const store = await createMongoRecordStore(db.conn)
      expect((await store.list(A, { limit: 10 })).items).toEqual([record(1), record(2), record(3)])
      expect((await store.get(A, record(2).qr_id))?.record).toEqual(record(2))
      await store.delete(A, record(2).qr_id, 1_800_000_000)
      expect((await store.changes(A, { limit: 10, includeDeleted: true })).items).toEqual([
        record(1), record(3), { qr_id: record(2).qr_id, deleted_at: 1_800_000_000, updated_at: 1_800_000_000 },
      ])
    } finally {
      await db.cleanup()
    }
  })

  it('logs each migration with documents to change, as it starts and when done; nothing for a new or a migrated database', async () => {
    const db = await freshDatabase(url(), 'lr_records_migration_lines')
    const { lines, restore } = captureLog()
    try {
      const migrationLines = () => lines.filter((line) => line.msg.startsWith('records migration')).map(({ msg, ...fields }): Record<string, unknown> => ({ msg: msg.split(':')[0], ...fields }))
      await (await createMongoRecordStore(db.conn)).insertMany(A, [record(1), record(2), record(3)])
      expect(migrationLines()).toEqual([])
      // A database from before change positions and tags, whose migrations never ran.
      await db.conn.db!.collection('static_records').updateMany({}, { $unset: { rev: '', tags: '' } })
      await db.conn.db!.collection('migrations').deleteMany({})
      await createMongoRecordStore(db.conn)
      const step = (adding: string) => [
        { msg: 'records migration started', store: 'static_records', records: 3, adding: [adding] },
        { msg: 'records migration done', store: 'static_records', records: 3, adding: [adding], seconds: expect.any(Number) },
      ]
      expect(migrationLines()).toEqual([...step('rev'), ...step('tags')])
      await createMongoRecordStore(db.conn)
      expect(migrationLines()).toHaveLength(4)
    } finally {
      restore()
      await db.cleanup()
    }
  })

  // One update command of them all never came back from FerretDB v1.24, and froze the database (mongo-bulk.ts).
  it('gives 120 documents stored before change positions their change positions', async () => {
    const db = await freshDatabase(url(), 'lr_records_old')
    try {
      const many = Array.from({ length: 120 }, (_, n) => record(n + 1))
      await (await createMongoRecordStore(db.conn)).insertMany(A, many)
      await db.conn.db!.collection('static_records').updateMany({}, { $unset: { rev: '' } })
      await db.conn.db!.collection('migrations').deleteMany({})
      const store = await createMongoRecordStore(db.conn)
      expect(await db.conn.db!.collection('static_records').countDocuments({ rev: { $exists: false } })).toBe(0)
      expect((await store.changes(A, { limit: 200 })).items).toEqual(many)
    } finally {
      await db.cleanup()
    }
  }, 10_000)

  it('reads documents stored before tags as tags [], gives them the field once, and filters them by tags later given', async () => {
    const db = await freshDatabase(url(), 'lr_records_tags')
    try {
      await (await createMongoRecordStore(db.conn)).insertMany(A, [record(1), record(2)])
      const records = db.conn.db!.collection('static_records')
      await records.updateMany({}, { $unset: { tags: '' } })
      // The migration's marker is there (it ran on the first open): such a document still reads as tags [].
      expect((await (await createMongoRecordStore(db.conn)).get(A, record(1).qr_id))?.record).toEqual(record(1))
      await db.conn.db!.collection('migrations').deleteMany({ _id: 'static_records.tags' as never })
      const store = await createMongoRecordStore(db.conn)
      expect(await records.countDocuments({ tags: [] })).toBe(2)
      expect((await store.list(A, { limit: 10 })).items).toEqual([record(1), record(2)])
      await store.update(A, record(2).qr_id, { tags: ['print'] }, 1_800_000_000)
      expect((await store.list(A, { limit: 10, tags: ['print'] })).items).toEqual([record(2, { tags: ['print'], updated_at: 1_800_000_000 })])
    } finally {
      await db.cleanup()
    }
  })

  it('holds a sort=created_at page back at a block still being written, as the plain list, and not the other orders', async () => {
    const db = await freshDatabase(url(), 'lr_records_sorted_horizon')
    try {
      // The record store itself, with the positions it takes blocks from.
      const store = await createMongoLibraryStore<StaticRecord, StaticPatch>(db.conn, STATIC_MONGO)
      await store.insertMany(A, [record(1)])
      // A replica that took its block and has not written yet: records after it must wait, or
      // they would be listed before it and it would land behind a reader's cursor.
      const open = await store.positions.allocate(1)
      try {
        await store.insertMany(A, [record(2)])
        const ids = async (sort?: 'created_at' | '-created_at' | 'name') => (await store.list(A, { limit: 10, ...(sort && { sort }) })).items.map((r) => r.qr_id)
        expect(await ids()).toEqual([record(1).qr_id])
        expect(await ids('created_at')).toEqual([record(1).qr_id])
        expect(await ids('-created_at')).toEqual([record(2).qr_id, record(1).qr_id])
        expect(await ids('name')).toEqual([record(1).qr_id, record(2).qr_id])
      } finally {
        await open.release()
      }
      expect((await store.list(A, { limit: 10, sort: 'created_at' })).items.map((r) => r.qr_id)).toEqual([record(1).qr_id, record(2).qr_id])
    } finally {
      await db.cleanup()
    }
  })

  it("takes over the claim of a version whose writer died before writing, once CLAIM_GRACE_MS has passed", async () => {
    const db = await freshDatabase(url(), 'lr_records_claims')
    try {
      const store = await createMongoRecordStore(db.conn)
      await store.insertMany(A, [record(1)])
      const { rev } = (await store.get(A, record(1).qr_id))!
      // A writer killed between its claim and its write (mongo-version-claims.ts), long ago.
      await db.conn.db!.collection('static_records_claims').insertOne({ _id: `${A}\n${record(1).qr_id}\n${rev}` as never, at: Date.now() - CLAIM_GRACE_MS - 1000 })
      expect(await store.update(A, record(1).qr_id, { name: 'After' }, 1_800_000_000, rev)).toEqual(record(1, { name: 'After', updated_at: 1_800_000_000 }))
      // Released once written: no claim is left behind.
      expect(await db.conn.db!.collection('static_records_claims').countDocuments({})).toBe(0)
    } finally {
      await db.cleanup()
    }
  })

  it("a writer waiting for another's claim gives up at its caller's deadline and writes nothing after it", async () => {
    const db = await freshDatabase(url(), 'lr_records_claim_deadline')
    try {
      const store = await createMongoRecordStore(db.conn)
      await store.insertMany(A, [record(1)])
      const { rev } = (await store.get(A, record(1).qr_id))!
      // A live writer holds the version (FerretDB under load: seconds behind a queue of writers).
      const claims = db.conn.db!.collection('static_records_claims')
      const held = `${A}\n${record(1).qr_id}\n${rev}` as never
      await claims.insertOne({ _id: held, at: Date.now() })
      // The gateway answers 504 at the deadline: a later write would undo the client's next PATCH.
      const started = Date.now()
      const waiting = asHandlerOf('req-late', started + 300, () => store.update(A, record(1).qr_id, { name: 'Late' }, 1_800_000_000))
      const outcome = waiting.then(() => 'written', (error) => (error as AppError).code)
      await Bun.sleep(1000)
      await claims.deleteOne({ _id: held })
      expect(await outcome).toBe('timeout')
      expect((await store.get(A, record(1).qr_id))!.record.name).toBe(record(1).name)
      expect(await claims.countDocuments({})).toBe(0)
    } finally {
      await db.cleanup()
    }
  })

  it('gives a document an older release inserted after the migration (no rev) a new change position: in the changes, and PATCHed', async () => {
    const db = await freshDatabase(url(), 'lr_records_marker')
    try {
      const records = db.conn.db!.collection('static_records')
      const store = await createMongoRecordStore(db.conn)
      await store.insertMany(A, [record(1), record(2), record(3)])
      expect(await db.conn.db!.collection('migrations').findOne({ _id: 'static_records.rev' as never })).not.toBeNull()
      // What a release before change positions writes (an old replica beside this one, or a
      // rollback): no rev. The marker is there, so the migration's scan never looks again.
      await records.updateOne({ qr_id: record(1).qr_id }, { $unset: { rev: '' } })
      await records.updateOne({ qr_id: record(2).qr_id }, { $set: { rev: null } })
      const changed = async () => (await store.changes(A, { limit: 10 })).items.map((r) => (r as StaticRecord).qr_id)
      expect(await changed()).toEqual([record(3).qr_id])
      // Written by this release at once (it had been a 503 for ever: "kept changing").
      expect(await store.update(A, record(1).qr_id, { name: 'Patched' }, 1_800_000_000)).toMatchObject({ name: 'Patched' })
      // The next open gives the other one its position, after every change so far.
      const { lines, restore } = captureLog()
      try {
        await createMongoRecordStore(db.conn)
      } finally {
        restore()
      }
      expect(lines.filter((line) => line.msg.startsWith('records without a change position')).map((line) => line.records)).toEqual([1])
      expect(await records.countDocuments({ rev: { $exists: false } })).toBe(0)
      expect(await changed()).toEqual([record(3).qr_id, record(1).qr_id, record(2).qr_id])
    } finally {
      await db.cleanup()
    }
  })

  describe('receipts', () => {
    receiptContract(async () => {
      const db = await freshDatabase(url(), 'lr_receipts_test')
      const store = await createMongoRecordStore(db.conn)
      return {
        store,
        insert: (n, receipt) => store.insertMany(A, [record(n)], receipt && (() => receipt)),
        count: async () => (await store.list(A, { limit: 1000 })).items.length,
        cleanup: db.cleanup,
      }
    })
  })
})

// Also sorted by created_at: (created_at, position) is position order, so records still being
// written must hold that walk back as they hold the plain one (mongo-list.ts sortedPage).
for (const sort of [undefined, 'created_at'] as const) describe.skipIf(Boolean(skip))(`RecordStore on MongoDB, several replicas${sort ? `, sort=${sort}` : ''}`, () => {
  const url = useMongoServer()
  concurrentPagingContract(async (writers) => {
    const name = `lr_records_paging_${crypto.randomUUID().slice(0, 8)}`
    // One connection per replica, as separate processes would have.
    const bases = await Promise.all(Array.from({ length: writers + 1 }, () => connectMongo(url())))
    const stores: RecordStore[] = []
    for (const base of bases) stores.push(await createMongoRecordStore(base.useDb(name, { useCache: false })))
    const reader = stores[writers]!
    return {
      insert: (w, ns) => stores[w]!.insertMany(A, ns.map((n) => record(n))),
      idsOf: (ns) => ns.map((n) => record(n).qr_id),
      async page(after, limit) {
        const { items, next } = await reader.list(A, { after, limit, ...(sort && { sort }) })
        return { ids: items.map((r) => r.qr_id), next }
      },
      async cleanup() {
        await bases[0]!.useDb(name, { useCache: false }).dropDatabase()
        await Promise.all(bases.map((base) => base.close()))
      },
    }
  })
})

describe.skipIf(Boolean(skip))('RecordStore on MongoDB, replicas writing one record', () => {
  const url = useMongoServer()
  concurrentWritesContract(staticFixture, async (replicas) => {
    const name = `lr_records_writes_${crypto.randomUUID().slice(0, 8)}`
    // One connection per replica, as separate processes would have.
    const bases = await Promise.all(Array.from({ length: replicas }, () => connectMongo(url())))
    const stores: RecordStore[] = []
    for (const base of bases) stores.push(await createMongoRecordStore(base.useDb(name, { useCache: false })))
    return {
      stores: stores as never,
      async cleanup() {
        await bases[0]!.useDb(name, { useCache: false }).dropDatabase()
        await Promise.all(bases.map((base) => base.close()))
      },
    }
  })
})

describe.skipIf(Boolean(skip))('RecordStore on MongoDB, replicas starting together', () => {
  const url = useMongoServer()

  it('opens on one fresh database from four replicas at once: every one starts, the migrations marked once', async () => {
    for (let round = 0; round < 5; round++) {
      const name = `lr_records_start_${crypto.randomUUID().slice(0, 8)}`
      // One connection per replica, as separate processes would have.
      const bases = await Promise.all(Array.from({ length: 4 }, () => connectMongo(url())))
      try {
        const stores = await Promise.all(bases.map((base) => createMongoRecordStore(base.useDb(name, { useCache: false }))))
        expect(stores).toHaveLength(4)
        const markers = await bases[0]!.useDb(name, { useCache: false }).db!.collection('migrations').find({}).toArray()
        expect(markers.map((m) => String(m._id)).sort()).toEqual(['static_records.rev', 'static_records.tags'])
      } finally {
        await bases[0]!.useDb(name, { useCache: false }).dropDatabase()
        await Promise.all(bases.map((base) => base.close()))
      }
    }
  }, 60_000)

  it('marks a migration that two replicas ran at once, without failing either (runOnce)', async () => {
    const db = await freshDatabase(url(), 'lr_records_once')
    try {
      // Both migrations run before either marks it done: the second marker is a duplicate key.
      let arrived = 0
      let release!: () => void
      const bothIn = new Promise<void>((resolve) => (release = resolve))
      const migrate = async () => {
        if (++arrived === 2) release()
        await bothIn
      }
      await Promise.all([runOnce(db.conn, 'test.once', migrate), runOnce(db.conn, 'test.once', migrate)])
      expect(arrived).toBe(2)
      // Once marked, a later open skips it.
      await runOnce(db.conn, 'test.once', async () => { arrived++ })
      expect(arrived).toBe(2)
      expect(await db.conn.db!.collection('migrations').countDocuments({ _id: 'test.once' as never })).toBe(1)
    } finally {
      await db.cleanup()
    }
  })
})
