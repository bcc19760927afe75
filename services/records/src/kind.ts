import { nanoid } from 'nanoid'
import type { RecordKind } from '@lr/library-records'
import { STATIC_EXPORT_COLUMNS, StaticBatchBody, StaticCreateBody, StaticPatchBody, type StaticRecord } from '@lr/proto'

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
  exportColumns: STATIC_EXPORT_COLUMNS,
  newIds: (count) => Array.from({ length: count }, newId),
  present: (record) => record,
})
