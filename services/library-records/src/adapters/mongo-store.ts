import { type Connection, type Model, type QueryFilter, Schema, Types } from 'mongoose'
import { type ListOptions, StoreConflict, type Tombstone } from '@lr/proto'
import { log } from '@lr/platform/log'
import { databaseNow } from '@lr/platform/mongo-clock'
import { bulkUpdate } from '@lr/platform/mongo-bulk'
import { createAtomicInsert } from '@lr/platform/mongo-insert'
import { type MongoPositions, pageRange, positionText } from '@lr/platform/mongo-position'
import { isFiltered } from '../list-order'
import { type LibraryStore, type OwnFields, type RecordBase, tombstoneOf } from '../ports'
import { recordsAt } from './change-times'
import { filterConditions, LIST_INDEXES, placeTags, sortedPage } from './mongo-list'
import { migrationStarted } from './migration-log'
import { createReceiptedChange } from './mongo-receipted-change'
import { mongoVersionClaims } from './mongo-version-claims'

/** Where one kind of record lives in MongoDB. */
export interface MongoKind {
  model: string
  collection: string
  idField: string
  urlField: string
  /**
   * The kind's own optional fields, null when not set (also in documents stored before the
   * field): absent from the record then; a PATCH's null clears one. `json` ones are stored as
   * JSON text. A `pending_change` among them enables ListOptions.pending.
   */
  extra?: OwnFields
}

/** A record as stored: style as JSON text (keeps key order and allows any key; Mongo rejects some, e.g. leading `$`). */
/** `position` (insert) and `rev` (last change): list positions, claimed in blocks from the server (platform/src/mongo-position.ts). */
/** `deleted_at` set: a tombstone (a static document stored before tombstones has no field: live). */
export type LibraryDoc = Record<string, unknown> & { _id: Types.ObjectId; position: number; rev: number; library: string; style: string; deleted_at?: number | null }

function schemaOf({ idField, urlField, extra = {} }: MongoKind) {
  const schema = new Schema<LibraryDoc>(
    {
      position: { type: Number, required: true },
      rev: { type: Number, required: true },
      library: { type: String, required: true },
      [idField]: { type: String, required: true },
      [urlField]: { type: String, required: true },
      name: { type: String, required: true },
      style: { type: String, required: true },
      tags: { type: [String], default: undefined },
      status: { type: String, required: true },
      team_id: { type: String, default: null },
      created_by: { type: String, required: true },
      created_at: { type: Number, required: true },
      updated_at: { type: Number, required: true },
      deleted_at: { type: Number, default: null },
      /** Set by a change made with an Idempotency-Key's receipt (mongo-receipted-change.ts); absent otherwise. */
      receipt_marker: { type: String },
      ...Object.fromEntries(Object.entries(extra).map(([field, type]) => [field, { type: type === 'number' ? Number : String, default: null }])),
    },
    { versionKey: false, autoIndex: false, strict: 'throw' },
  )
  schema.index({ library: 1, position: 1 })
  schema.index({ library: 1, rev: 1 })
  for (const index of LIST_INDEXES) schema.index(index)
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

/** Which one-off migrations of a database are done, one document each (`_id`: collection and what). */
const MIGRATIONS_COLLECTION = 'migrations'

/**
 * Runs a one-off migration of the database unless its marker (`_id`: collection and what) is in
 * MIGRATIONS_COLLECTION, then sets the marker, so later opens skip the scan it needs. Replicas
 * starting at once may both run it (every migration here is idempotent); the second marker is a
 * duplicate key, which only says the first is there (an upsert would not do: two concurrent
 * upserts of one _id can fail on MongoDB and FerretDB alike).
 */
export async function runOnce(conn: Connection, marker: string, migrate: () => Promise<void>): Promise<void> {
  const migrations = conn.db!.collection<{ _id: string; at: number }>(MIGRATIONS_COLLECTION)
  if (await migrations.findOne({ _id: marker })) return
  await migrate()
  await migrations.insertOne({ _id: marker, at: Date.now() }).catch((error: unknown) => {
    if (!isDuplicateKey(error)) throw error
  })
}

/**
 * Documents stored before change positions existed get theirs: their insert position. Each
 * document keeps the first value it is given (two replicas may run this at once).
 */
async function placeChanges(Model: Model<LibraryDoc>): Promise<void> {
  const docs = await Model.collection.find({ rev: { $exists: false } }, { projection: { position: 1 } }).toArray()
  if (docs.length === 0) return
  const done = migrationStarted({ store: Model.collection.collectionName, records: docs.length, adding: ['rev'] })
  // In short commands: every one of these updates matches a document (mongo-bulk.ts).
  await bulkUpdate(Model.collection, docs.map(({ _id, position }) => ({ updateOne: { filter: { _id, rev: { $exists: false } }, update: { $set: { rev: position } } } })))
  done()
}

/**
 * Documents without `rev` once the migration above is done: inserted by a release before change
 * positions (before 9b5b966) that wrote to the database after this one had opened it (an old
 * replica beside new ones, or a rollback and then this release again). By library, so each
 * lookup is one range of the (library, rev) index (a missing `rev` is indexed as null).
 */
async function lateInserts(Model: Model<LibraryDoc>): Promise<LibraryDoc[]> {
  const libraries: string[] = await Model.collection.distinct('library')
  const found: LibraryDoc[] = []
  for (let i = 0; i < libraries.length; i += 1000)
    found.push(...(await Model.collection.find({ library: { $in: libraries.slice(i, i + 1000) }, rev: null }, { projection: { updated_at: 1 } }).toArray()) as never[])
  return found
}

/**
 * The LibraryStore of one kind in MongoDB over a shared mongoose connection (autoIndex is off,
 * so the indexes are created here). Positions (mongo-position.ts) as hex: `position` for list,
 * `rev` for changes, from one allocator, so one horizon holds both back.
 */
export async function createMongoLibraryStore<R extends RecordBase, P extends Partial<R>>(conn: Connection, kind: MongoKind): Promise<LibraryStore<R, P> & { positions: MongoPositions }> {
  const { idField } = kind
  const extra = kind.extra ?? {}
  const extraFields = Object.keys(extra)
  const ownFields = new Set(extraFields)
  /** A kind's own field as its document holds it. */
  const storedOf = (field: string, value: unknown) => (value == null ? null : extra[field] === 'json' ? JSON.stringify(value) : value)
  const extraOf = (values: Record<string, unknown>, only: 'given' | 'all' = 'all') =>
    Object.fromEntries(extraFields.filter((f) => only === 'all' || values[f] !== undefined).map((f) => [f, storedOf(f, values[f])]))
  const pendingFilter = (options: ListOptions) =>
    options.pending === undefined || !('pending_change' in extra) ? {} : { pending_change: options.pending ? { $ne: null } : null }
  const Model = libraryModel(conn, kind)
  await Model.createIndexes()
  const atomic = await createAtomicInsert(conn, Model, kind.collection, { rev: true, times: ['created_at', 'updated_at'] })
  await runOnce(conn, `${kind.collection}.rev`, () => placeChanges(Model))
  await runOnce(conn, `${kind.collection}.tags`, () => placeTags(Model))
  // Built key by key in the document's order, then style (and tags where an old document has
  // none), as before: the ETag hashes the JSON. A kind's own field that is not set is left out,
  // as it was when stored. Never `delete` a key instead: that makes every record a slow
  // dictionary object (list pages measured 2x slower).
  const toRecord = (doc: LibraryDoc) => {
    const record: Record<string, unknown> = {}
    const fields = doc as unknown as Record<string, unknown>
    for (const key in fields) {
      const value = fields[key]
      if (key === '_id' || key === 'position' || key === 'rev' || key === 'library' || key === 'deleted_at' || key === 'style' || key === 'receipt_marker') continue
      if (!ownFields.has(key)) record[key] = value
      else if (value != null) record[key] = extra[key] === 'json' ? JSON.parse(value as string) : value
    }
    record.style = JSON.parse(doc.style)
    record.tags ??= []
    return record as unknown as R
  }
  const toItem = (doc: LibraryDoc): R | Tombstone => (doc.deleted_at == null ? toRecord(doc) : tombstoneOf(idField, doc))
  // `deleted_at: null` also matches a document without the field. With `expectedRev`, a compare-and-set (LibraryStore.update).
  const live = (library: string, id: string, expectedRev?: number) => ({ library, [idField]: id, deleted_at: null, ...(expectedRev !== undefined && { rev: expectedRev }) })
  const claims = mongoVersionClaims(conn, kind.collection, atomic.now)
  /** Gives one document a new change position while `set` applies: the block stays open (holding readers back) until written. */
  async function write(filter: QueryFilter<LibraryDoc>, set: Record<string, unknown>): Promise<LibraryDoc | null> {
    const block = await atomic.positions.allocate(1, set.updated_at as number)
    // No earlier than the change before it (change-times.ts); a delete's two times alike.
    const times = block.time === set.updated_at ? {} : { updated_at: block.time, ...(set.deleted_at !== undefined && { deleted_at: block.time }) }
    let doc: LibraryDoc | null
    try {
      doc = await Model.findOneAndUpdate(filter, { $set: { ...set, ...times, rev: block.first } }, { returnDocument: 'after' }).lean<LibraryDoc>()
    } finally {
      await block.release()
    }
    return doc && block.lapsed() ? ((await moveOn(doc)) ?? doc) : doc
  }
  /**
   * A document written in a block that lapsed (PositionBlock.lapsed: its writer stalled past the
   * lease, so a reader may have listed past it) gets a new change position and time, ahead of
   * every reader, unless a later write moved it on already. A client syncing by the largest
   * `updated_at` it saw would otherwise never be given it.
   */
  function moveOn(doc: LibraryDoc): Promise<LibraryDoc | null> {
    // Rare (a stall of seconds), and a sign of a paused process or a database slower than the lease.
    log().warn({ collection: kind.collection, rev: doc.rev }, 'a write landed after its list position block lapsed (its writer stalled past the lease): moved to a new change position')
    return write({ _id: doc._id, rev: doc.rev }, { updated_at: doc.updated_at, ...(doc.deleted_at != null && { deleted_at: doc.deleted_at }) })
  }
  /**
   * A change of one document, by the one writer of the version it changes (mongo-version-claims.ts).
   * With `rev` in `filter` a compare-and-set of that version: null when another writer had it.
   * Without, of the version read here, again until it lands or the document is gone.
   */
  async function change(filter: QueryFilter<LibraryDoc>, set: Record<string, unknown>): Promise<LibraryDoc | null> {
    const id = filter[idField] as string
    for (;;) {
      const found = filter.rev !== undefined ? filter : await Model.findOne(filter, { rev: 1, updated_at: 1 }).lean<LibraryDoc>()
      if (!found) return null
      // An old release's document (lateInserts): given its change position first, then changed.
      if (found.rev == null) {
        await placeLate(found as LibraryDoc)
        continue
      }
      const rev = found.rev
      const claim = await claims.take(filter.library as string, id, rev as number)
      const doc = claim && await write({ ...filter, rev }, set).finally(() => claim.release())
      if (doc || filter.rev !== undefined) return doc ?? null
    }
  }
  /** Gives a document without `rev` (lateInserts) a new change position, as a change: past every reader. */
  const placeLate = (doc: LibraryDoc) => write({ _id: doc._id, rev: null }, { updated_at: doc.updated_at })
  async function page(library: string, options: ListOptions, by: 'position' | 'rev', filter: QueryFilter<LibraryDoc>) {
    filter[by] = await pageRange(atomic.positions, options.after)
    if (options.updatedSince !== undefined) filter.updated_at = { $gte: options.updatedSince }
    const docs = await Model.find({ library, ...filter }).sort({ [by]: 1 }).limit(options.limit + 1).lean<LibraryDoc[]>()
    const more = docs.length > options.limit
    if (more) docs.pop()
    return { docs, next: more ? positionText(docs[docs.length - 1]![by]) : null }
  }

  const receipted = createReceiptedChange<R, LibraryDoc>({ Model, idField, receipts: atomic.receipts, now: atomic.now, owner: atomic.owner, change, toRecord })

  const late = await lateInserts(Model)
  if (late.length > 0) log().warn({ collection: kind.collection, records: late.length }, 'records without a change position (written by a release before 9b5b966 after this one had opened the database) get one now, as a change')
  for (const doc of late) await placeLate(doc)

  const now = await databaseNow(conn)
  return {
    /** The kind's positions, for the queries a kind adds on the same collection. */
    positions: atomic.positions,

    async insertMany(library, records, receiptOf) {
      try {
        const docs = records.map((r) => ({
          ...(r as unknown as Record<string, unknown>), _id: new Types.ObjectId(), library, style: JSON.stringify(r.style), tags: r.tags ?? [], deleted_at: null,
          ...extraOf(r as unknown as Record<string, unknown>),
        }))
        const { time, lapsed } = await atomic.insert(docs as unknown as Omit<LibraryDoc, 'position'>[], receiptOf && ((time) => receiptOf(recordsAt(records, time))))
        if (!lapsed) return recordsAt(records, time)
        const moved: R[] = []
        for (const [i, { _id }] of docs.entries()) {
          const stored = await Model.findById(_id, { rev: 1, updated_at: 1, deleted_at: 1 }).lean<LibraryDoc>()
          const doc = stored && (await moveOn(stored))
          moved.push(doc ? toRecord(doc) : recordsAt([records[i]!], time)[0]!)
        }
        return moved
      } catch (error) {
        throw isDuplicateKey(error) ? new StoreConflict(idField, (error as DuplicateKey).keyValue?.[idField]) : error
      }
    },

    findReceipt: (scope, key, since) => atomic.findReceipt(scope, key, since, receipted.finish),

    async get(library, id) {
      const doc = await Model.findOne(live(library, id)).lean<LibraryDoc>()
      return doc ? { record: toRecord(doc), rev: doc.rev } : null
    },

    async list(library, options: ListOptions) {
      const plain = { deleted_at: null, ...(options.status && { status: options.status }), ...pendingFilter(options) }
      if (isFiltered(options)) {
        const conditions = [...filterConditions(options, kind.urlField), ...(options.pending === undefined ? [] : [pendingFilter(options)])]
        const { docs, next } = options.sort
          ? await sortedPage(Model, library, options, conditions, () => atomic.positions.horizon())
          : await page(library, options, 'position', { ...plain, ...(conditions.length > 0 && { $and: conditions }) })
        return { items: docs.map(toRecord), next }
      }
      const { docs, next } = await page(library, options, 'position', plain)
      return { items: docs.map(toRecord), next }
    },

    async changes(library, options: ListOptions) {
      const status = { ...(options.status && { status: options.status }), ...pendingFilter(options) }
      const filter = options.includeDeleted ? (Object.keys(status).length > 0 ? { $or: [{ deleted_at: null, ...status }, { deleted_at: { $ne: null } }] } : {}) : { deleted_at: null, ...status }
      const { docs, next } = await page(library, options, 'rev', filter)
      return { items: docs.map(toItem), next }
    },

    async update(library, id, patch, updatedAt, expectedRev, receiptOf) {
      const { style, ...plain } = patch
      const own = extraOf(patch as Record<string, unknown>, 'given')
      const set = { ...plain, ...(style === undefined ? {} : { style: JSON.stringify(style) }), updated_at: updatedAt, ...own }
      if (receiptOf) return receipted.update(library, id, live(library, id, expectedRev), set, receiptOf)
      const doc = await change(live(library, id, expectedRev), set)
      return doc ? toRecord(doc) : null
    },

    async delete(library, id, deletedAt, expectedRev) {
      const doc = await change(live(library, id, expectedRev), { deleted_at: deletedAt, updated_at: deletedAt })
      return doc ? toRecord(doc) : null
    },

    async ping() {
      return conn.readyState === 1 && (await conn.db!.admin().ping().then(() => true, () => false))
    },
    now,
  }
}
