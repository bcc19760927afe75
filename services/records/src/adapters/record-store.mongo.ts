import { type Connection, type Model, type QueryFilter, Schema, Types } from 'mongoose'
import { badCursor, type ListOptions } from '@lr/proto'
import type { StaticRecord } from '@lr/proto/records'
import { mongoReceipts } from '@lr/proto/idempotency-mongo'
import type { Receipt } from '@lr/proto/idempotency'
import type { RecordStore, StaticPatch } from '../ports'

interface StaticDoc extends Omit<StaticRecord, 'style'> {
  _id: Types.ObjectId
  library: string
  /** JSON text: keeps key order and allows any key (Mongo rejects some, e.g. leading `$`). */
  style: string
}

const schema = new Schema<StaticDoc>(
  {
    library: { type: String, required: true },
    qr_id: { type: String, required: true },
    url: { type: String, required: true },
    name: { type: String, required: true },
    style: { type: String, required: true },
    status: { type: String, required: true },
    team_id: { type: String, default: null },
    created_by: { type: String, required: true },
    created_at: { type: Number, required: true },
    updated_at: { type: Number, required: true },
  },
  { versionKey: false, autoIndex: false, strict: 'throw' },
)
schema.index({ library: 1, _id: 1 })
schema.index({ qr_id: 1 }, { unique: true })

const toRecord = ({ _id, library: _library, style, ...rest }: StaticDoc): StaticRecord => ({ ...rest, style: JSON.parse(style) })

function idOf(position: string): Types.ObjectId {
  if (!/^[0-9a-f]{24}$/.test(position)) throw badCursor()
  return new Types.ObjectId(position)
}

/** Transactions need a replica set or mongos; a standalone server gets insert-then-clean-up. */
async function supportsTransactions(conn: Connection): Promise<boolean> {
  const hello = await conn.db!.admin().command({ hello: 1 })
  return Boolean(hello.setName) || hello.msg === 'isdbgrid'
}

/**
 * A RecordStore in MongoDB over a shared mongoose connection (autoIndex is off, so the indexes
 * are created here). Position = the document's ObjectId as hex.
 */
export async function createMongoRecordStore(conn: Connection): Promise<RecordStore> {
  const Model = (conn.models.StaticRecord as Model<StaticDoc> | undefined) ?? conn.model<StaticDoc>('StaticRecord', schema, 'static_records')
  await Model.createIndexes()
  const transactions = await supportsTransactions(conn)

  const receipts = await mongoReceipts(conn)

  async function insertDocs(docs: StaticDoc[], receipt?: Receipt): Promise<void> {
    if (transactions) {
      await conn.transaction(async (session) => {
        await Model.insertMany(docs, { session, ordered: true })
        if (receipt) await receipts.write(receipt, session)
      })
      return
    }
    try {
      await Model.insertMany(docs, { ordered: true })
      if (receipt) await receipts.write(receipt)
    } catch (error) {
      // By _id, which this call assigned: a clashing qr_id may belong to an older record.
      await Model.deleteMany({ _id: { $in: docs.map((doc) => doc._id) } })
      throw error
    }
  }

  return {
    async insertMany(library, records, receipt) {
      await insertDocs(records.map((r) => ({ ...r, _id: new Types.ObjectId(), library, style: JSON.stringify(r.style) })), receipt)
    },

    findReceipt: receipts.findReceipt,

    async get(library, qrId) {
      const doc = await Model.findOne({ library, qr_id: qrId }).lean<StaticDoc>()
      return doc ? toRecord(doc) : null
    },

    async list(library, options: ListOptions) {
      const filter: QueryFilter<StaticDoc> = { library }
      if (options.after !== undefined) filter._id = { $gt: idOf(options.after) }
      if (options.updatedSince !== undefined) filter.updated_at = { $gte: options.updatedSince }
      const docs = await Model.find(filter).sort({ _id: 1 }).limit(options.limit + 1).lean<StaticDoc[]>()
      const more = docs.length > options.limit
      if (more) docs.pop()
      return { items: docs.map(toRecord), next: more ? docs[docs.length - 1]!._id.toHexString() : null }
    },

    async update(library, qrId, patch: StaticPatch, updatedAt) {
      const { style, ...plain } = patch
      const set = { ...plain, ...(style === undefined ? {} : { style: JSON.stringify(style) }), updated_at: updatedAt }
      const doc = await Model.findOneAndUpdate({ library, qr_id: qrId }, { $set: set }, { returnDocument: 'after' }).lean<StaticDoc>()
      return doc ? toRecord(doc) : null
    },

    async delete(library, qrId) {
      const result = await Model.deleteOne({ library, qr_id: qrId })
      return result.deletedCount === 1
    },

    async ping() {
      return conn.readyState === 1 && (await conn.db!.admin().ping().then(() => true, () => false))
    },
  }
}
