import { type Connection, type Model, type QueryFilter, Schema, Types } from 'mongoose'
import type { ListOptions } from '@lr/proto'
import type { StaticRecord } from '@lr/proto'
import { createAtomicInsert, objectIdOf } from '@lr/platform/mongo-insert'
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

/**
 * A RecordStore in MongoDB over a shared mongoose connection (autoIndex is off, so the indexes
 * are created here). Position = the document's ObjectId as hex.
 */
export async function createMongoRecordStore(conn: Connection): Promise<RecordStore> {
  const Model = (conn.models.StaticRecord as Model<StaticDoc> | undefined) ?? conn.model<StaticDoc>('StaticRecord', schema, 'static_records')
  await Model.createIndexes()
  const atomic = await createAtomicInsert(conn, Model)

  return {
    async insertMany(library, records, receipt) {
      await atomic.insert(records.map((r) => ({ ...r, _id: new Types.ObjectId(), library, style: JSON.stringify(r.style) })), receipt)
    },

    findReceipt: atomic.findReceipt,

    async get(library, qrId) {
      const doc = await Model.findOne({ library, qr_id: qrId }).lean<StaticDoc>()
      return doc ? toRecord(doc) : null
    },

    async list(library, options: ListOptions) {
      const filter: QueryFilter<StaticDoc> = { library }
      if (options.after !== undefined) filter._id = { $gt: objectIdOf(options.after) }
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
