import type { Connection } from 'mongoose'
import type { Config } from '@lr/proto'
import type { RunningService, ServiceContext } from '@lr/platform/lifecycle'
import { type OpenedStore, openServiceStore } from '@lr/platform/store'
import { exportWorkerOf, libraryDeploymentOf, type LibraryStartOptions } from '@lr/library-records'
import { createSqliteRecordStore } from './adapters/record-store.sqlite'
import { serveRecords } from './handlers'
import type { RecordStore } from './ports'
import { createRecordsService } from './service'

/** Opens the store config.STORE names (`${DATA_DIR}/records.sqlite`, or Mongo); see openServiceStore. */
export const openRecordStore = (config: Config, mongo?: Connection): Promise<OpenedStore<RecordStore>> =>
  openServiceStore(config, mongo, {
    name: 'records',
    sqlite: createSqliteRecordStore,
    mongo: async () => (await import('./adapters/record-store.mongo')).createMongoRecordStore,
  })

/** The clock and the record-event sink (LibraryStartOptions). */
export type StartRecordsOptions = LibraryStartOptions

/** Starts the records service on a bus: opens its store and serves every records subject. */
export async function startRecords({ bus, config, mongo }: ServiceContext, opts: StartRecordsOptions = {}): Promise<RunningService> {
  const { store, close } = await openRecordStore(config, mongo)
  const { close: releaseClaims, ...deployment } = libraryDeploymentOf(bus, config, opts, store)
  // On SQLite, exports are read and formatted by a Worker (export-in-worker.ts).
  const exportWorker = exportWorkerOf(store, 'records')
  const service = createRecordsService({ store, ...deployment, exportWorker })
  const unsubscribe = serveRecords(bus, service)
  return {
    ready: () => store.ping(),
    async stop() {
      unsubscribe()
      await exportWorker?.close()
      await close()
      releaseClaims()
    },
  }
}
