import type { ListOptions, Page } from '@lr/proto'
import type { Receipt, ReceiptStore } from '@lr/proto'
import type { StaticRecord } from '@lr/proto'

/** The fields a PATCH may change; absent fields keep their value. */
export type StaticPatch = Partial<Pick<StaticRecord, 'url' | 'name' | 'status' | 'style'>>

/**
 * Persistence of static QR code records. Every record is stored under its library
 * (`libraryOf(principal)`) and every call is scoped by it: a record of another library is
 * indistinguishable from one that does not exist (null / false), never an error.
 * Adapters: createSqliteRecordStore (bun:sqlite), createMongoRecordStore (mongoose).
 */
export interface RecordStore extends ReceiptStore {
  /**
   * Stores the records under `library`, all or nothing (one transaction). Rejects with the
   * driver's error when any of them cannot be stored (e.g. a duplicate qr_id); then none is.
   * With a receipt (an Idempotency-Key's answer) it is stored in the same transaction; a live
   * receipt with the same scope and key makes the whole call fail with ReceiptTaken.
   */
  insertMany(library: string, records: StaticRecord[], receipt?: Receipt): Promise<void>

  /** The record, or null when it does not exist in this library. */
  get(library: string, qrId: string): Promise<StaticRecord | null>

  /**
   * A page of the library, oldest first by a monotonic position the store assigns at insert
   * (hex text). `after` continues from a page's `next`; records inserted meanwhile appear after
   * it, so walking every page returns every record exactly once. `updatedSince` keeps records
   * with updated_at >= it. `next` is null on the last page. A position this store could not
   * have issued is AppError('bad_request').
   */
  list(library: string, options: ListOptions): Promise<Page<StaticRecord>>

  /** Applies the patch and sets updated_at; the updated record, or null when not in this library. */
  update(library: string, qrId: string, patch: StaticPatch, updatedAt: number): Promise<StaticRecord | null>

  /** Deletes for good (static deletes are hard deletes); false when not in this library. */
  delete(library: string, qrId: string): Promise<boolean>

  /** True while the store answers (readiness); never rejects. */
  ping(): Promise<boolean>
}
