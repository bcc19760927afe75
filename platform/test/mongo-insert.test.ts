import { describe, expect, it, setSystemTime } from 'bun:test'
import { type Connection, Schema, Types } from 'mongoose'
import { createAtomicInsert, PENDING_GRACE_MS, supportsTransactions } from '@lr/platform/mongo-insert'
import { mongoReceipts } from '@lr/platform/idempotency-mongo'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../test/harness/ferretdb'

// A writer killed (kill -9) between its receipt and its documents, on a server without
// transactions: the next reader of the receipt writes what is missing, and nothing twice.
interface ThingDoc {
  _id: Types.ObjectId
  position: number
  code: string
}
const schema = new Schema<ThingDoc>({ position: { type: Number, required: true }, code: { type: String, required: true } }, { versionKey: false, autoIndex: false })
schema.index({ code: 1 }, { unique: true })

async function open(conn: Connection) {
  const Model = conn.model<ThingDoc>('Thing', schema, 'things')
  await Model.createIndexes()
  return { Model, atomic: await createAtomicInsert(conn, Model, 'things') }
}

const receiptOf = (createdAt: number) => ({ scope: 'key_1', key: 'idem-1', fingerprint: 'f', response: { created: ['a', 'b', 'c'] }, created_at: createdAt })

const skip = mongoSkipReason()
describe.skipIf(Boolean(skip))('atomic insert without transactions (Mongo)', () => {
  const url = useMongoServer()

  it('writes the documents a dead writer\'s receipt names that are missing, once, before the answer is replayed', async () => {
    const db = await freshDatabase(url(), 'lr_insert_test')
    try {
      const { Model, atomic } = await open(db.conn)
      if (await supportsTransactions(db.conn)) return // a replica set never leaves a receipt unsettled
      const receipts = await mongoReceipts(db.conn)
      // The dead writer: its receipt (written before its documents) and the first of its three documents.
      // (The test's FerretDB runs on this machine: its clock is this one.)
      const createdAt = Math.floor(Date.now() / 1000) - 10
      await receipts.write(receiptOf(createdAt), undefined, { write: { in: 'things', docs: [{ code: 'a' }, { code: 'b' }, { code: 'c' }] }, at: Date.now() - PENDING_GRACE_MS - 1000 })
      await Model.collection.insertOne({ _id: new Types.ObjectId(), position: 1, code: 'a' })

      const replayed = await atomic.findReceipt('key_1', 'idem-1', createdAt - 60)
      expect(replayed?.response).toEqual({ created: ['a', 'b', 'c'] })
      expect((await Model.find({}).lean()).map((d) => d.code).sort()).toEqual(['a', 'b', 'c'])
      // Settled: a second reader writes nothing more.
      await atomic.findReceipt('key_1', 'idem-1', createdAt - 60)
      expect(await Model.countDocuments()).toBe(3)
    } finally {
      await db.cleanup()
    }
  })

  it('waits for a live writer\'s receipt by the database server\'s clock, even where this process\'s clock runs a minute ahead', async () => {
    const db = await freshDatabase(url(), 'lr_insert_test')
    try {
      const { Model, atomic } = await open(db.conn)
      if (await supportsTransactions(db.conn)) return
      const receipts = await mongoReceipts(db.conn)
      // The live writer: its receipt just written, one of its three documents in, the rest coming.
      const createdAt = Math.floor(Date.now() / 1000)
      await receipts.write(receiptOf(createdAt), undefined, { write: { in: 'things', docs: [{ code: 'a' }, { code: 'b' }, { code: 'c' }] }, at: Date.now() })
      await Model.collection.insertOne({ _id: new Types.ObjectId(), position: 1, code: 'a' })
      setSystemTime(new Date(Date.now() + 60_000))
      let replayed: Promise<unknown>
      try {
        replayed = atomic.findReceipt('key_1', 'idem-1', createdAt - 60)
        await Bun.sleep(200)
      } finally {
        setSystemTime()
      }
      // The writer finishes: its other documents, then the receipt settled.
      await Model.collection.insertMany([{ _id: new Types.ObjectId(), position: 2, code: 'b' }, { _id: new Types.ObjectId(), position: 3, code: 'c' }])
      await receipts.settle('key_1', 'idem-1')
      expect(((await replayed) as { response: unknown }).response).toEqual({ created: ['a', 'b', 'c'] })
      // Nothing written beside the writer: its three documents, at its own positions.
      expect((await Model.find({}).sort({ position: 1 }).lean()).map((d) => [d.code, d.position])).toEqual([['a', 1], ['b', 2], ['c', 3]])
    } finally {
      await db.cleanup()
    }
  })

  it('leaves a dead writer\'s receipt of another collection to its own service: nothing of it is written here', async () => {
    const db = await freshDatabase(url(), 'lr_insert_test')
    try {
      const { Model, atomic } = await open(db.conn)
      if (await supportsTransactions(db.conn)) return
      const receipts = await mongoReceipts(db.conn)
      // Another service's create (one key answers for one request across every route) died after its receipt.
      const createdAt = Math.floor(Date.now() / 1000) - 10
      await receipts.write(receiptOf(createdAt), undefined, { write: { in: 'other_things', docs: [{ code: 'a' }, { code: 'b' }] }, at: Date.now() - PENDING_GRACE_MS - 1000 })
      const found = await atomic.findReceipt('key_1', 'idem-1', createdAt - 60)
      expect(found?.fingerprint).toBe('f') // answered as it stands: this reader's request differs, a 422
      expect(await Model.countDocuments()).toBe(0)
      expect((await receipts.findReceipt('key_1', 'idem-1', createdAt - 60))?.pending).toEqual({ in: 'other_things', docs: [{ code: 'a' }, { code: 'b' }] })
    } finally {
      await db.cleanup()
    }
  })

  it('settles its own receipt once its documents are written, so a twin replays without writing', async () => {
    const db = await freshDatabase(url(), 'lr_insert_test')
    try {
      const { Model, atomic } = await open(db.conn)
      const at = Math.floor(Date.now() / 1000)
      await atomic.insert([{ _id: new Types.ObjectId(), code: 'x' }, { _id: new Types.ObjectId(), code: 'y' }], () => ({ ...receiptOf(at), response: { created: ['x', 'y'] } }))
      const started = performance.now()
      expect((await atomic.findReceipt('key_1', 'idem-1', at - 60))?.response).toEqual({ created: ['x', 'y'] })
      expect(performance.now() - started).toBeLessThan(1000) // no wait for a writer that is done
      expect(await Model.countDocuments()).toBe(2)
    } finally {
      await db.cleanup()
    }
  })
})
