import type { Connection } from 'mongoose'
import type { Config } from '@lr/proto'
import type { RunningService, ServiceContext } from '@lr/platform/lifecycle'
import { type OpenedStore, openServiceStore } from '@lr/platform/store'
import { createSqliteRecordStore } from './adapters/record-store.sqlite'
import { serveRecords } from './handlers'
import type { RecordStore } from './ports'
import { createRecordsService } from './service'

export type { RecordStore, StaticPatch } from './ports'
export { createSqliteRecordStore } from './adapters/record-store.sqlite'
export { createRecordsService, EXPORT_PAGE_SIZE, type RecordsDeps, type RecordsService } from './service'
export { EXPORT_COLUMNS } from './fields'
export { serveRecords } from './handlers'

/** Opens the store config.STORE names (`${DATA_DIR}/records.sqlite`, or Mongo); see openServiceStore. */
export const openRecordStore = (config: Config, mongo?: Connection): Promise<OpenedStore<RecordStore>> =>
  openServiceStore(config, mongo, {
    name: 'records',
    sqlite: createSqliteRecordStore,
    mongo: async () => (await import('./adapters/record-store.mongo')).createMongoRecordStore,
  })

/** Starts the records service on a bus: opens its store and serves every records subject. */
export async function startRecords({ bus, config, mongo }: ServiceContext): Promise<RunningService> {
  const { store, close } = await openRecordStore(config, mongo)
  const service = createRecordsService({ store, now: () => Math.floor(Date.now() / 1000) })
  const unsubscribe = serveRecords(bus, service)
  return {
    ready: () => store.ping(),
    async stop() {
      unsubscribe()
      await close()
    },
  }
}
