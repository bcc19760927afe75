import { type Connection, type Model, type QueryFilter, Schema, Types } from 'mongoose'
import type { ListOptions } from '@lr/proto'
import { createAtomicInsert } from '@lr/platform/mongo-insert'
import { pageRange, positionText } from '@lr/platform/mongo-position'
import { CodeTakenError, type DynamicPatch, type DynamicStore, type StoredDynamic } from '../ports'

interface DynamicDoc extends Omit<StoredDynamic, 'style'> {
  _id: Types.ObjectId
  /** The list position, assigned by the server-side counter (mongo-position.ts). */
  position: number
  library: string
  /** JSON text: keeps key order and allows any key (Mongo rejects some, e.g. leading `$`). */
  style: string
  /** Set by a soft delete; the document stays so its code is never issued again. */
  deleted_at: number | null
}

const schema = new Schema<DynamicDoc>(
  {
    position: { type: Number, required: true },
    library: { type: String, required: true },
    code: { type: String, required: true },
    destination_url: { type: String, required: true },
    name: { type: String, required: true },
    style: { type: String, required: true },
    status: { type: String, required: true },
    team_id: { type: String, default: null },
    created_by: { type: String, required: true },
    created_at: { type: Number, required: true },
    updated_at: { type: Number, required: true },
    deleted_at: { type: Number, default: null },
  },
  { versionKey: false, autoIndex: false, strict: 'throw' },
)
schema.index({ library: 1, position: 1 })
// What keeps a code unique forever, across every replica of the service.
schema.index({ code: 1 }, { unique: true })

const toRecord = ({ _id, position: _position, library: _library, deleted_at: _deleted, style, ...rest }: DynamicDoc): StoredDynamic => ({ ...rest, style: JSON.parse(style) })

type DuplicateKey = { code?: number; keyValue?: { code?: string }; writeErrors?: { code?: number }[] }
const isDuplicateKey = (error: unknown) =>
  (error as DuplicateKey)?.code === 11000 || Boolean((error as DuplicateKey)?.writeErrors?.some((e) => e.code === 11000))

/**
 * A DynamicStore in MongoDB over a shared mongoose connection (autoIndex is off, so the indexes
 * are created here). Position = its `position` (mongo-position.ts) as hex.
 */
export async function createMongoDynamicStore(conn: Connection): Promise<DynamicStore> {
  const Model = (conn.models.DynamicCode as Model<DynamicDoc> | undefined) ?? conn.model<DynamicDoc>('DynamicCode', schema, 'dynamic_codes')
  await Model.createIndexes()
  const atomic = await createAtomicInsert(conn, Model, Model.collection.collectionName)

  const live = (library: string, code: string) => ({ library, code, deleted_at: null })

  return {
    async insertMany(library, records, receipt) {
      try {
        const docs = records.map((r) => ({ ...r, _id: new Types.ObjectId(), library, style: JSON.stringify(r.style), deleted_at: null }))
        await atomic.insert(docs, receipt)
      } catch (error) {
        throw isDuplicateKey(error) ? new CodeTakenError((error as DuplicateKey).keyValue?.code) : error
      }
    },

    findReceipt: atomic.findReceipt,

    async get(library, code) {
      const doc = await Model.findOne(live(library, code)).lean<DynamicDoc>()
      return doc ? toRecord(doc) : null
    },

    async list(library, options: ListOptions) {
      const filter: QueryFilter<DynamicDoc> = { library, deleted_at: null }
      filter.position = await pageRange(atomic.positions, options.after)
      if (options.updatedSince !== undefined) filter.updated_at = { $gte: options.updatedSince }
      if (options.status !== undefined) filter.status = options.status
      const docs = await Model.find(filter).sort({ position: 1 }).limit(options.limit + 1).lean<DynamicDoc[]>()
      const more = docs.length > options.limit
      if (more) docs.pop()
      return { items: docs.map(toRecord), next: more ? positionText(docs[docs.length - 1]!.position) : null }
    },

    async update(library, code, patch: DynamicPatch, updatedAt) {
      const { style, ...plain } = patch
      const set = { ...plain, ...(style === undefined ? {} : { style: JSON.stringify(style) }), updated_at: updatedAt }
      const doc = await Model.findOneAndUpdate(live(library, code), { $set: set }, { returnDocument: 'after' }).lean<DynamicDoc>()
      return doc ? toRecord(doc) : null
    },

    async softDelete(library, code, deletedAt) {
      const set = { deleted_at: deletedAt, updated_at: deletedAt }
      const doc = await Model.findOneAndUpdate(live(library, code), { $set: set }, { returnDocument: 'after' }).lean<DynamicDoc>()
      return doc ? toRecord(doc) : null
    },

    async resolve(code) {
      const doc = await Model.findOne({ code }, { code: 1, destination_url: 1, status: 1, deleted_at: 1 }).lean<DynamicDoc>()
      return doc ? { code: doc.code, destination_url: doc.destination_url, status: doc.status, deleted: doc.deleted_at !== null } : null
    },

    async liveCodes(library, options) {
      const filter: QueryFilter<DynamicDoc> = { library, deleted_at: null }
      filter.position = await pageRange(atomic.positions, options.after)
      const docs = await Model.find(filter, { code: 1, position: 1 }).sort({ position: 1 }).limit(options.limit + 1).lean<Pick<DynamicDoc, 'position' | 'code'>[]>()
      const more = docs.length > options.limit
      if (more) docs.pop()
      return { items: docs.map((d) => d.code), next: more ? positionText(docs[docs.length - 1]!.position) : null }
    },

    async findCode(library, code) {
      const doc = await Model.findOne({ library, code }, { code: 1, deleted_at: 1 }).lean<Pick<DynamicDoc, 'code' | 'deleted_at'>>()
      return doc ? { code: doc.code, deleted: doc.deleted_at !== null } : null
    },

    async ping() {
      return conn.readyState === 1 && (await conn.db!.admin().ping().then(() => true, () => false))
    },
  }
}
