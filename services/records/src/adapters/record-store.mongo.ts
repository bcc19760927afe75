import type { Connection } from 'mongoose'
import { createMongoLibraryStore, type MongoKind } from '@lr/library-records/mongo'
import type { RecordStore } from '../ports'

export const STATIC_MONGO: MongoKind = { model: 'StaticRecord', collection: 'static_records', idField: 'qr_id', urlField: 'url' }

/** A RecordStore in MongoDB over a shared mongoose connection; see createMongoLibraryStore. */
export const createMongoRecordStore = (conn: Connection): Promise<RecordStore> => createMongoLibraryStore(conn, STATIC_MONGO)
