import { type Static, Type as T } from '@sinclair/typebox'
import { AnsweredUrl, BATCH_MAX, Epoch, RecordBodyFields, RecordUrl, Status, Tags, tombstoneOf } from './library'

/** Subjects of services/records (static QR codes); queue group `records`. */
export const RECORDS_SUBJECTS = {
  create: 'records.v1.create',
  batch: 'records.v1.batch',
  list: 'records.v1.list',
  get: 'records.v1.get',
  update: 'records.v1.update',
  delete: 'records.v1.delete',
  /** One page of the CSV export: {principal, cursor} -> ExportChunk. */
  export: 'records.v1.export',
} as const
export const RECORDS_QUEUE = 'records'


/** A static QR code record (docs/decisions.md §3). */
export const StaticRecord = T.Object({
  qr_id: T.String(),
  url: AnsweredUrl(),
  name: T.String({ minLength: 1, maxLength: 200 }),
  style: T.Record(T.String(), T.Unknown()),
  tags: Tags,
  status: Status,
  team_id: T.Union([T.String(), T.Null()]),
  created_by: T.String(),
  created_at: Epoch,
  updated_at: Epoch,
})
export type StaticRecord = Static<typeof StaticRecord>

/** CSV columns of /qrcodes/export, in order (docs/decisions.md §7): services/records writes them, the gateway documents them. */
export const STATIC_EXPORT_COLUMNS = [
  'qr_id', 'name', 'url', 'status', 'team_id', 'created_by', 'style', 'created_at', 'updated_at',
  'tags',
] as const satisfies readonly (keyof StaticRecord)[]

/**
 * Request bodies: the gateway documents them and services/records validates with these same
 * schema objects (compiled by @lr/library-records), so the docs and the checks cannot drift.
 */
export const StaticCreateBody = T.Object({ url: RecordUrl, ...RecordBodyFields }, { additionalProperties: false })
export const StaticBatchBody = T.Object({ qrcodes: T.Array(StaticCreateBody, { minItems: 1, maxItems: BATCH_MAX }) }, { additionalProperties: false })
export const StaticPatchBody = T.Partial(
  T.Object({ url: RecordUrl, ...RecordBodyFields, status: Status }),
  { additionalProperties: false, minProperties: 1 },
)
export const StaticTombstone = tombstoneOf('qr_id', 'the deleted record\'s id')
/** A page: records, and with include_deleted=true the deleted ones' tombstones among them. */
export const StaticList = T.Object({ qrcodes: T.Array(T.Union([StaticRecord, StaticTombstone])), next_cursor: T.Union([T.String(), T.Null()]) })
