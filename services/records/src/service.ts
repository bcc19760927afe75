import { nanoid } from 'nanoid'
import { AppError, libraryOf, type ListQuery, type Principal } from '@lr/proto'
import { decodeCursor, nextCursor } from '@lr/platform/cursor'
import { orBadRequest, parseListQuery } from '@lr/library-records'
import { batchItems, checkBatch } from '@lr/library-records'
import { csvChunk } from '@lr/platform/csv'
import type { ExportChunk, StaticRecord } from '@lr/proto'
import { idempotent } from '@lr/platform/idempotency'
import { type Receipt } from '@lr/proto'
import { checkStatusChange, ownershipOf } from '@lr/library-records'
import { checkCreate, checkPatch, EXPORT_COLUMNS, type CreateFields } from './fields'
import type { RecordStore } from './ports'

/** Rows per export chunk: large enough to be fast, small enough to keep memory flat. */
export const EXPORT_PAGE_SIZE = 2000

export interface RecordsDeps {
  store: RecordStore
  /** Current time in epoch seconds. */
  now: () => number
  /** A new opaque, unique qr_id. */
  newId?: () => string
  /** Rows per export chunk; default EXPORT_PAGE_SIZE. */
  exportPageSize?: number
}

export type RecordsService = ReturnType<typeof createRecordsService>

const notFound = (id: string) => new AppError('not_found', `no QR code ${JSON.stringify(id.slice(0, 100))} in this library`)

/** The domain operations on static QR codes; every one is scoped to the principal's library. */
export function createRecordsService(deps: RecordsDeps) {
  const { store, now, newId = () => `qr_${nanoid()}`, exportPageSize = EXPORT_PAGE_SIZE } = deps
  function build(principal: Principal, fields: CreateFields, at: number): StaticRecord {
    return { qr_id: newId(), url: fields.url, name: fields.name, style: fields.style ?? {}, ...ownershipOf(principal), created_at: at, updated_at: at }
  }

  type Created = { created: StaticRecord[] }

  /** Stores the records; with an Idempotency-Key, at most once per key (the answer is replayed). */
  function insert(principal: Principal, route: string, body: unknown, key: string | undefined, check: () => CreateFields[]) {
    const at = now()
    return idempotent<Created>(store, { scope: principal.key_id, key, route, body, now: at }, async (receiptFor?: (r: Created) => Receipt) => {
      const response = { created: check().map((fields) => build(principal, fields, at)) }
      await store.insertMany(libraryOf(principal), response.created, receiptFor?.(response))
      return response
    })
  }

  async function found(principal: Principal, id: string): Promise<StaticRecord> {
    const record = await store.get(libraryOf(principal), id)
    if (!record) throw notFound(id)
    return record
  }

  return {
    async create(principal: Principal, body: unknown, idempotencyKey?: string) {
      return insert(principal, 'records.create', body, idempotencyKey, () => [orBadRequest(() => checkCreate(body))])
    },

    /** All or nothing: every failing item is named and nothing is stored. */
    async batch(principal: Principal, body: unknown, idempotencyKey?: string) {
      return insert(principal, 'records.batch', body, idempotencyKey, () => checkBatch(batchItems(body, 'qrcodes'), checkCreate))
    },

    async list(principal: Principal, query: ListQuery) {
      const page = await store.list(libraryOf(principal), parseListQuery(query, { status: false }))
      return { qrcodes: page.items, next_cursor: nextCursor(page) }
    },

    get: found,

    async update(principal: Principal, id: string, body: unknown): Promise<StaticRecord> {
      const patch = orBadRequest(() => checkPatch(body))
      const current = await found(principal, id)
      if (patch.status !== undefined) {
        checkStatusChange(principal, current.status, patch.status)
        // An unchanged status is not written, so a writer's no-op `active` cannot race a move to draft.
        if (patch.status === current.status) delete patch.status
      }
      const updated = await store.update(libraryOf(principal), id, patch, now())
      if (!updated) throw notFound(id)
      return updated
    },

    async delete(principal: Principal, id: string): Promise<{ deleted: string }> {
      if (!(await store.delete(libraryOf(principal), id))) throw notFound(id)
      return { deleted: id }
    },

    /** One chunk of the CSV export; `cursor` null starts it (and only that chunk has the header). */
    async exportPage(principal: Principal, cursor: string | null): Promise<ExportChunk> {
      const after = cursor === null ? undefined : decodeCursor(cursor)
      const read = (limit: number) => store.list(libraryOf(principal), { limit, after })
      return csvChunk(EXPORT_COLUMNS, read, exportPageSize, cursor === null)
    },
  }
}
