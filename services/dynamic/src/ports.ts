import type { ListOptions, Page } from '@lr/proto'
import type { CodeStatus, DynamicRecord, ResolverEntry } from '@lr/proto'
import type { Receipt, ReceiptStore } from '@lr/proto'

/** A dynamic record as stored: short_url is derived from SHORT_BASE_URL when answering, never stored. */
export type StoredDynamic = Omit<DynamicRecord, 'short_url'>

/** The fields a PATCH may change; absent fields keep their value. */
export type DynamicPatch = Partial<Pick<StoredDynamic, 'destination_url' | 'name' | 'status' | 'style'>>

/** insertMany's rejection when a code is already taken (by any record, soft-deleted ones included). */
export class CodeTakenError extends Error {
  constructor(readonly code?: string) {
    super(`code ${code ?? '(unknown)'} is already taken`)
    this.name = 'CodeTakenError'
  }
}

/**
 * Persistence of dynamic QR codes. Every record is stored under its library
 * (`libraryOf(principal)`) and every call but `resolve` is scoped by it: a record of another
 * library, or a soft-deleted one, is indistinguishable from one that does not exist (null).
 * A soft-deleted record keeps its row forever, so its code is never issued again.
 * Adapters: createSqliteDynamicStore (bun:sqlite), createMongoDynamicStore (mongoose).
 */
export interface DynamicStore extends ReceiptStore {
  /**
   * Stores the records under `library`, all or nothing. The store itself enforces that a code is
   * unique forever (primary key / unique index): a code already taken, or repeated in the call,
   * rejects with CodeTakenError and then none is stored. Other failures reject with the driver's error.
   * With a receipt (an Idempotency-Key's answer) it is stored in the same transaction; a live
   * receipt with the same scope and key makes the whole call fail with ReceiptTaken.
   */
  insertMany(library: string, records: StoredDynamic[], receipt?: Receipt): Promise<void>

  /** The live record, or null when missing, soft-deleted or in another library. */
  get(library: string, code: string): Promise<StoredDynamic | null>

  /**
   * A page of the library's live records, oldest first by a monotonic position the store assigns
   * at insert (hex text); same paging rules as RecordStore.list, plus the `status` filter.
   * A position this store could not have issued is AppError('bad_request').
   */
  list(library: string, options: ListOptions): Promise<Page<StoredDynamic>>

  /** Applies the patch and sets updated_at; the updated live record, or null (as `get`). */
  update(library: string, code: string, patch: DynamicPatch, updatedAt: number): Promise<StoredDynamic | null>

  /** Marks the live record deleted at `deletedAt` (also its updated_at); the record, or null (as `get`). */
  softDelete(library: string, code: string, deletedAt: number): Promise<StoredDynamic | null>

  /** What a scan of `code` needs, in whatever library, soft-deleted included; null when never issued. */
  resolve(code: string): Promise<ResolverEntry | null>

  /**
   * A page of the library's live codes only, oldest first, with the same positions as `list`
   * (analytics' summary lists every live code).
   */
  liveCodes(library: string, options: { after?: string; limit: number }): Promise<Page<string>>

  /** The code when it is in this library, soft-deleted included (analytics keeps its history); null otherwise. */
  findCode(library: string, code: string): Promise<CodeStatus | null>

  /** True while the store answers (readiness); never rejects. */
  ping(): Promise<boolean>
}
