import { createLibraryService, type LibraryDeps } from '@lr/library-records'
import type { StaticRecord } from '@lr/proto'
import { staticKind } from './kind'
import type { StaticPatch } from './ports'

export interface RecordsDeps extends LibraryDeps<StaticRecord, StaticPatch> {
  /** A new opaque, unique qr_id; default `qr_` + 21 random characters. */
  newId?: () => string
}

export type RecordsService = ReturnType<typeof createRecordsService>

/** The domain operations on static QR codes: the shared lifecycle, nothing of their own. */
export const createRecordsService = ({ newId, ...deps }: RecordsDeps) => createLibraryService(staticKind(newId), deps)
