import { nanoid } from 'nanoid'
import type { RecordKind } from '@lr/library-records'
import { StaticBatchBody, StaticCreateBody, StaticPatchBody, type StaticRecord } from '@lr/proto'

/** CSV columns of /qrcodes/export, in order (docs/decisions.md §7). */
export const EXPORT_COLUMNS = [
  'qr_id', 'name', 'url', 'status', 'team_id', 'created_by', 'style', 'created_at', 'updated_at',
] as const satisfies readonly (keyof StaticRecord)[]

/** A new opaque, unique qr_id. */
export const randomQrId = () => `qr_${nanoid()}`

/** Static QR codes as a kind of library record: answered as stored. */
export const staticKind = (newId: () => string = randomQrId): RecordKind<StaticRecord, StaticRecord, 'qrcodes'> => ({
  name: 'records',
  noun: 'QR code',
  idField: 'qr_id',
  urlField: 'url',
  listKey: 'qrcodes',
  statusFilter: false,
  bodies: { create: StaticCreateBody, batch: StaticBatchBody, patch: StaticPatchBody },
  exportColumns: EXPORT_COLUMNS,
  newIds: (count) => Array.from({ length: count }, newId),
  present: (record) => record,
})
