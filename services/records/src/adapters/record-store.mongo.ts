import { type Connection, type Model, type QueryFilter, Schema, Types } from 'mongoose'
import type { ListOptions } from '@lr/proto'
import type { StaticRecord } from '@lr/proto'
import { createAtomicInsert } from '@lr/platform/mongo-insert'
import { pageRange, positionText } from '@lr/platform/mongo-position'
import type { RecordStore, StaticPatch } from '../ports'

interface StaticDoc extends Omit<StaticRecord, 'style'> {
  _id: Types.ObjectId
  /** The list position, assigned by the server-side counter (mongo-position.ts). */
  position: number
  library: string
  /** JSON text: keeps key order and allows any key (Mongo rejects some, e.g. leading `$`). */
  style: string
}

const schema = new Schema<StaticDoc>(
  {
    position: { type: Number, required: true },
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
schema.index({ library: 1, position: 1 })
schema.index({ qr_id: 1 }, { unique: true })

const toRecord = ({ _id, position: _position, library: _library, style, ...rest }: StaticDoc): StaticRecord => ({ ...rest, style: JSON.parse(style) })

/**
 * A RecordStore in MongoDB over a shared mongoose connection (autoIndex is off, so the indexes
 * are created here). Position = its `position` (mongo-position.ts) as hex.
 */
export async function createMongoRecordStore(conn: Connection): Promise<RecordStore> {
  const Model = (conn.models.StaticRecord as Model<StaticDoc> | undefined) ?? conn.model<StaticDoc>('StaticRecord', schema, 'static_records')
  await Model.createIndexes()
  const atomic = await createAtomicInsert(conn, Model, Model.collection.collectionName)

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
      filter.position = await pageRange(atomic.positions, options.after)
      if (options.updatedSince !== undefined) filter.updated_at = { $gte: options.updatedSince }
      const docs = await Model.find(filter).sort({ position: 1 }).limit(options.limit + 1).lean<StaticDoc[]>()
      const more = docs.length > options.limit
      if (more) docs.pop()
      return { items: docs.map(toRecord), next: more ? positionText(docs[docs.length - 1]!.position) : null }
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
