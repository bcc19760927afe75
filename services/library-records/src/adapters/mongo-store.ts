import { type Connection, type Model, type QueryFilter, Schema, Types } from 'mongoose'
import { type ListOptions, StoreConflict } from '@lr/proto'
import { createAtomicInsert } from '@lr/platform/mongo-insert'
import { type MongoPositions, pageRange, positionText } from '@lr/platform/mongo-position'
import type { LibraryStore, RecordBase } from '../ports'

/** Where and how one kind of record lives in MongoDB. */
export interface MongoKind {
  model: string
  collection: string
  idField: string
  urlField: string
  /** Soft delete: documents stay with deleted_at set, so an id is never issued again. */
  softDelete: boolean
}

/** A record as stored: style as JSON text (keeps key order and allows any key; Mongo rejects some, e.g. leading `$`). */
/** `position`: the list position, claimed in blocks from the server (platform/src/mongo-position.ts). */
export type LibraryDoc = Record<string, unknown> & { _id: Types.ObjectId; position: number; library: string; style: string; deleted_at?: number | null }

function schemaOf({ idField, urlField, softDelete }: MongoKind) {
  const schema = new Schema<LibraryDoc>(
    {
      position: { type: Number, required: true },
      library: { type: String, required: true },
      [idField]: { type: String, required: true },
      [urlField]: { type: String, required: true },
      name: { type: String, required: true },
      style: { type: String, required: true },
      status: { type: String, required: true },
      team_id: { type: String, default: null },
      created_by: { type: String, required: true },
      created_at: { type: Number, required: true },
      updated_at: { type: Number, required: true },
      ...(softDelete ? { deleted_at: { type: Number, default: null } } : {}),
    },
    { versionKey: false, autoIndex: false, strict: 'throw' },
  )
  schema.index({ library: 1, position: 1 })
  // What keeps an id unique for ever, across every replica of the service.
  schema.index({ [idField]: 1 }, { unique: true })
  return schema
}

type DuplicateKey = { code?: number; keyValue?: Record<string, string>; writeErrors?: { code?: number }[] }
const isDuplicateKey = (error: unknown) =>
  (error as DuplicateKey)?.code === 11000 || Boolean((error as DuplicateKey)?.writeErrors?.some((e) => e.code === 11000))

/** The kind's mongoose model on `conn` (registered once per connection). */
export const libraryModel = (conn: Connection, kind: MongoKind): Model<LibraryDoc> =>
  (conn.models[kind.model] as Model<LibraryDoc> | undefined) ?? conn.model<LibraryDoc>(kind.model, schemaOf(kind), kind.collection)

/**
 * The LibraryStore of one kind in MongoDB over a shared mongoose connection (autoIndex is off,
 * so the indexes are created here). Position = its `position` (mongo-position.ts) as hex.
 */
export async function createMongoLibraryStore<R extends RecordBase, P extends Partial<R>>(conn: Connection, kind: MongoKind): Promise<LibraryStore<R, P> & { positions: MongoPositions }> {
  const { idField, softDelete } = kind
  const Model = libraryModel(conn, kind)
  await Model.createIndexes()
  const atomic = await createAtomicInsert(conn, Model, kind.collection)
  const toRecord = ({ _id, position: _position, library: _library, deleted_at: _deleted, style, ...rest }: LibraryDoc) => ({ ...rest, style: JSON.parse(style) }) as unknown as R
  const live = (library: string, id: string) => ({ library, [idField]: id, ...(softDelete ? { deleted_at: null } : {}) })

  return {
    /** The kind's positions, for the queries a kind adds on the same collection. */
    positions: atomic.positions,

    async insertMany(library, records, receipt) {
      try {
        const docs = records.map((r): Omit<LibraryDoc, 'position'> => ({ ...(r as unknown as Record<string, unknown>), _id: new Types.ObjectId(), library, style: JSON.stringify(r.style), ...(softDelete ? { deleted_at: null } : {}) }))
        await atomic.insert(docs, receipt)
      } catch (error) {
        throw isDuplicateKey(error) ? new StoreConflict(idField, (error as DuplicateKey).keyValue?.[idField]) : error
      }
    },

    findReceipt: atomic.findReceipt,

    async get(library, id) {
      const doc = await Model.findOne(live(library, id)).lean<LibraryDoc>()
      return doc ? toRecord(doc) : null
    },

    async list(library, options: ListOptions) {
      const filter: QueryFilter<LibraryDoc> = { library, ...(softDelete ? { deleted_at: null } : {}) }
      filter.position = await pageRange(atomic.positions, options.after)
      if (options.updatedSince !== undefined) filter.updated_at = { $gte: options.updatedSince }
      if (options.status !== undefined) filter.status = options.status
      const docs = await Model.find(filter).sort({ position: 1 }).limit(options.limit + 1).lean<LibraryDoc[]>()
      const more = docs.length > options.limit
      if (more) docs.pop()
      return { items: docs.map(toRecord), next: more ? positionText(docs[docs.length - 1]!.position) : null }
    },

    async update(library, id, patch, updatedAt) {
      const { style, ...plain } = patch
      const set = { ...plain, ...(style === undefined ? {} : { style: JSON.stringify(style) }), updated_at: updatedAt }
      const doc = await Model.findOneAndUpdate(live(library, id), { $set: set }, { returnDocument: 'after' }).lean<LibraryDoc>()
      return doc ? toRecord(doc) : null
    },

    async delete(library, id, deletedAt) {
      const doc = softDelete
        ? await Model.findOneAndUpdate(live(library, id), { $set: { deleted_at: deletedAt, updated_at: deletedAt } }, { returnDocument: 'after' }).lean<LibraryDoc>()
        : await Model.findOneAndDelete(live(library, id)).lean<LibraryDoc>()
      return doc ? toRecord(doc) : null
    },

    async ping() {
      return conn.readyState === 1 && (await conn.db!.admin().ping().then(() => true, () => false))
    },
  }
}
