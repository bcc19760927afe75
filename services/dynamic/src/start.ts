import type { Connection } from 'mongoose'
import { ANALYTICS_SUBJECTS, type Config, dynamicChangedSubject, type ScanCount } from '@lr/proto'
import type { RunningService, ServiceContext } from '@lr/platform/lifecycle'
import { type OpenedStore, openServiceStore } from '@lr/platform/store'
import { exportWorkerOf, libraryDeploymentOf, type LibraryStartOptions } from '@lr/library-records'
import { createSqliteDynamicStore } from './adapters/dynamic-store.sqlite'
import { serveDynamic } from './handlers'
import type { DynamicStore } from './ports'
import { createDynamicService } from './service'

/** Opens the store config.STORE names (`${DATA_DIR}/dynamic.sqlite`, or Mongo); see openServiceStore. */
export const openDynamicStore = (config: Config, mongo?: Connection): Promise<OpenedStore<DynamicStore>> =>
  openServiceStore(config, mongo, {
    name: 'dynamic',
    sqlite: createSqliteDynamicStore,
    mongo: async () => (await import('./adapters/dynamic-store.mongo')).createMongoDynamicStore,
  })

/** The clock and the record-event sink (LibraryStartOptions). */
export type StartDynamicOptions = LibraryStartOptions

/**
 * Starts the dynamic service on a bus: opens its store, serves every dynamic subject, and
 * announces each change on dynamicChangedSubject(code) for the resolvers.
 */
export async function startDynamic({ bus, config, mongo }: ServiceContext, opts: StartDynamicOptions = {}): Promise<RunningService> {
  const { store, close } = await openDynamicStore(config, mongo)
  const { close: releaseClaims, ...deployment } = libraryDeploymentOf(bus, config, opts, store)
  // On SQLite, exports are read and formatted by a Worker (export-in-worker.ts).
  const exportWorker = exportWorkerOf(store, 'dynamic')
  const service = createDynamicService({
    store,
    ...deployment,
    exportWorker,
    shortBaseUrl: config.SHORT_BASE_URL,
    // Settled: in one process a change is answered once every resolver thread has it.
    announce: (entry, settled) => bus.publish(dynamicChangedSubject(entry.code), entry, { settled }),
    countScans: async (code) => (await bus.request<ScanCount>(ANALYTICS_SUBJECTS.count, { code })).scans,
  })
  const unsubscribe = serveDynamic(bus, service)
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
