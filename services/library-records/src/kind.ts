import type { TObject, TSchema } from '@sinclair/typebox'
import type { FieldRules } from './field-rules'
import type { Exported, RecordBase } from './ports'
import type { DerivedCells } from '@lr/platform/csv'
import type { RecordEventType } from '@lr/proto'

/**
 * One kind of library record (static QR codes, dynamic QR codes): what tells it apart from the
 * other. `R` is the record as stored, `W` as answered, `L` the key of its list replies.
 */
export interface RecordKind<R extends RecordBase, W, L extends string> {
  /** Service name: the idempotency routes are `${name}.create` and `${name}.batch`. */
  name: string
  /** What the client calls one record, in not-found messages ("QR code"). */
  noun: string
  /** The field holding the record's id (`qr_id`, `code`). */
  idField: keyof R & string
  /** The field holding the record's URL (`url`, `destination_url`). */
  urlField: keyof R & string
  /** Key of list replies (`qrcodes`). */
  listKey: L
  /** Whether list takes a `status` filter. */
  statusFilter: boolean
  /** Body schemas of @lr/proto, documented by the gateway and compiled here; `batch` holds `create` items. */
  bodies: { create: TObject; batch: TSchema; patch: TObject }
  /** CSV columns of the export, in order. */
  exportColumns: readonly (keyof W & string)[]
  /**
   * The export's columns that are not stored fields, each a prefix and a stored field (dynamic's
   * short_url): an export formats stored records as they are read, without present()'s copy of
   * each, and possibly in a Worker (export-in-worker.ts), which is why this is data. Every other
   * column is the stored field of its name, as present() answers it.
   */
  exportCells?: DerivedCells
  /** `count` new distinct ids. */
  newIds(count: number): string[]
  /** False for an id this kind could never have issued: it is not looked up. Default: any. */
  isPossibleId?(id: string): boolean
  /** The record as answered. */
  present(record: R): W
  /** Runs after records were created, changed or deleted (`type`), before the answer; must not reject. */
  changed?(records: R[], type: RecordEventType): Promise<void>
  /** Body rules of this kind's own fields, beside those of every record (recordRules). */
  fieldRules?: FieldRules
  /**
   * The fields a writer's PATCH of an active record in a team library only proposes (review.ts,
   * docs/decisions.md "Reviewed edits"), each with its value when a record lacks it: the record
   * keeps them until a team admin approves. Absent: every edit applies at once (static codes: the
   * URL is printed).
   */
  reviewed?: Readonly<Partial<Record<keyof R & string, unknown>>>
  /** Set by createLibraryService when it has an event sink (webhooks): one event per record; must not reject. */
  emit?(type: RecordEventType, library: string, records: R[]): Promise<void>
}
