import type { Connection, QueryFilter } from 'mongoose'
import { createMongoLibraryStore, type LibraryDoc, libraryModel, type MongoKind } from '@lr/library-records/mongo'
import { pageRange, positionText } from '@lr/platform/mongo-position'
import type { Status } from '@lr/proto'
import { limitsOf, rulesOf } from '../kind'
import { DYNAMIC_OWN_FIELDS, type DynamicPatch, type DynamicStore, type StoredDynamic } from '../ports'

export const DYNAMIC_MONGO: MongoKind = { model: 'DynamicCode', collection: 'dynamic_codes', idField: 'code', urlField: 'destination_url', extra: DYNAMIC_OWN_FIELDS }

type DynamicDoc = LibraryDoc & { code: string; destination_url: string; status: Status; deleted_at: number | null; redirect_rules?: string | null }
  & { expires_at?: number | null; max_scans?: number | null; fallback_url?: string | null }

/**
 * A DynamicStore in MongoDB over a shared mongoose connection: the shared store core, plus the
 * resolver's lookup and analytics' directory on the same collection.
 */
export async function createMongoDynamicStore(conn: Connection): Promise<DynamicStore> {
  const { positions, ...shared } = await createMongoLibraryStore<StoredDynamic, DynamicPatch>(conn, DYNAMIC_MONGO)
  const Model = libraryModel(conn, DYNAMIC_MONGO)

  return {
    ...shared,

    async resolve(code) {
      const doc = await Model.findOne(
        { code },
        { code: 1, destination_url: 1, status: 1, deleted_at: 1, redirect_rules: 1, expires_at: 1, max_scans: 1, fallback_url: 1 },
      ).lean<DynamicDoc>()
      if (!doc) return null
      const rules = rulesOf({ redirect_rules: doc.redirect_rules == null ? undefined : JSON.parse(doc.redirect_rules) })
      return { code: doc.code, destination_url: doc.destination_url, status: doc.status, deleted: doc.deleted_at !== null, ...rules, ...limitsOf(doc) }
    },

    async liveCodes(library, options) {
      const filter: QueryFilter<LibraryDoc> = { library, deleted_at: null }
      filter.position = await pageRange(positions, options.after)
      const docs = await Model.find(filter, { code: 1, position: 1 }).sort({ position: 1 }).limit(options.limit + 1).lean<Pick<DynamicDoc, 'position' | 'code'>[]>()
      const more = docs.length > options.limit
      if (more) docs.pop()
      return { items: docs.map((d) => d.code), next: more ? positionText(docs[docs.length - 1]!.position) : null }
    },

    async libraryOfCode(code) {
      const doc = await Model.findOne({ code }, { library: 1 }).lean<{ library: string }>()
      return doc?.library ?? null
    },

    async findCode(library, code) {
      const doc = await Model.findOne({ library, code }, { code: 1, deleted_at: 1 }).lean<Pick<DynamicDoc, 'code' | 'deleted_at'>>()
      return doc ? { code: doc.code, deleted: doc.deleted_at !== null } : null
    },
  }
}
