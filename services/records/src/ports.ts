import type { LibraryStore } from '@lr/library-records'
import type { StaticRecord } from '@lr/proto'

/** The fields a PATCH may change; absent fields keep their value. */
export type StaticPatch = Partial<Pick<StaticRecord, 'url' | 'name' | 'status' | 'style' | 'tags'>>

/**
 * Persistence of static QR code records: the shared LibraryStore, id `qr_id`. A delete leaves a
 * tombstone that only the list of changes shows (include_deleted); the id is never issued again. Adapters: createSqliteRecordStore (bun:sqlite),
 * createMongoRecordStore (mongoose).
 */
export type RecordStore = LibraryStore<StaticRecord, StaticPatch>
