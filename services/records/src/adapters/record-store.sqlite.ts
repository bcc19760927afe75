import type { Database } from 'bun:sqlite'
import { createSqliteLibraryStore, type SqliteKind } from '@lr/library-records/sqlite'
import type { RecordStore } from '../ports'

export const STATIC_SQLITE: SqliteKind = { table: 'static_records', idField: 'qr_id', urlField: 'url' }

/** A RecordStore in an embedded SQLite database (see openSqlite); creates its table if needed. */
export const createSqliteRecordStore = (db: Database): RecordStore => createSqliteLibraryStore(db, STATIC_SQLITE)
