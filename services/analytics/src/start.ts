import type { Connection } from 'mongoose'
import type { Config, ScanSource } from '@lr/proto'
import type { RunningService, ServiceContext } from '@lr/platform/lifecycle'
import { type OpenedStore, openServiceStore } from '@lr/platform/store'
import { createSqliteAnalyticsStore } from './adapters/analytics-store.sqlite'
import { createBusCodeDirectory } from './adapters/code-directory.bus'
import { serveAnalytics } from './handlers'
import { ANALYTICS_STORE, type AnalyticsStore, type CodeDirectory } from './ports'
import { ingestInWorker } from './ingest-in-worker'
import { createAnalyticsService } from './service'

/**
 * Opens the store config.STORE names (`${DATA_DIR}/analytics.sqlite`, or Mongo); see openServiceStore.
 * `writtenElsewhere`: another thread (the ingestion Worker) writes the file, holding its write
 * lock a whole batch long, so readiness does not take that lock as a stranger's.
 */
export const openAnalyticsStore = (config: Config, mongo?: Connection, writtenElsewhere = false): Promise<OpenedStore<AnalyticsStore>> =>
  openServiceStore(config, mongo, {
    name: ANALYTICS_STORE,
    sqliteHealth: { lockProbe: !writtenElsewhere },
    sqlite: createSqliteAnalyticsStore,
    mongo: async () => (await import('./adapters/analytics-store.mongo')).createMongoAnalyticsStore,
  })

export interface AnalyticsOptions {
  /** Which codes a library has; default: asked of the dynamic service over the bus. */
  directory?: CodeDirectory
  /**
   * Where scans come from; the entry point picks it: the SCAN_BATCHES stream (main.ts, TRANSPORT=nats)
   * or events of the in-process bus (standalone).
   */
  source: ScanSource
  /** Where scan batches are written: this thread (default) or a Worker (see ingestInWorker; STORE=sqlite only). */
  ingest?: 'in-thread' | 'worker'
}

/**
 * Starts the analytics service on a bus: opens its store, serves every analytics subject and
 * applies scans as they arrive. `stop` stops the intake first (what is delivered but not applied
 * stays in the stream), then the subjects, then closes the store.
 */
export async function startAnalytics(ctx: ServiceContext, opts: AnalyticsOptions): Promise<RunningService> {
  const { store, close, failed } = await openAnalyticsStore(ctx.config, ctx.mongo, opts.ingest === 'worker')
  const directory = opts.directory ?? createBusCodeDirectory(ctx.bus)
  const service = createAnalyticsService({ store, directory })
  const { source } = opts
  // The Worker's write errors count as this store's own (its readiness included).
  const worker = opts.ingest === 'worker' ? await ingestInWorker(ctx.config.DATA_DIR, { failed: (error) => failed('applyScans', error) }) : undefined
  try {
    await source.start(worker?.apply ?? ((events, writing) => service.ingest(events, writing).then(() => undefined)), undefined, worker?.applyTexts)
  } catch (error) {
    await worker?.close()
    await close()
    throw error
  }
  const unsubscribe = serveAnalytics(ctx.bus, service)
  return {
    ready: () => store.ping(),
    async stop() {
      await source.stop()
      await worker?.close()
      unsubscribe()
      await close()
    },
  }
}
