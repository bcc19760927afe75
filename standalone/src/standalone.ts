import { type Config } from '@lr/proto'
import { createBusScanPublisher } from '@lr/platform/scan-publisher'
import { createLocalBus } from '@lr/platform/bus-local'
import { createBusScanSource, SCAN_BUFFER } from '@lr/platform/scan-source'
import { openScanBatchSpool } from '@lr/platform/scan-spool'
import { openMongoIfConfigured, type RunningService } from '@lr/platform/lifecycle'
import { startAuth } from '@lr/auth'
import { startRecords } from '@lr/records'
import { createResolverFromConfig, type Resolver, startDynamic } from '@lr/dynamic'
import { startAnalytics } from '@lr/analytics'
import { startWebhooks } from '@lr/webhooks'
import { createAdmission, createGateway } from '@lr/gateway'

/**
 * The whole product in one process over the in-process bus: what `bun start` runs, and what the
 * in-process API test suite drives through `gateway.handle`.
 */
export async function startStandalone(config: Config) {
  const bus = createLocalBus({ maxPayload: config.BUS_MAX_PAYLOAD_BYTES })
  const mongo = await openMongoIfConfigured(config)
  const ctx = { bus, config, mongo }
  const services: RunningService[] = []
  for (const start of [startAuth, startRecords, startDynamic]) services.push(await start(ctx))
  // Scans are events of this bus (the resolver below publishes them). On SQLite their writes run
  // in a Worker, on the second core, not on the thread that answers redirects and API calls.
  const ingest = config.STORE === 'sqlite' ? 'worker' : 'in-thread'
  // Behind, analytics takes every scan waiting in one call (the Worker applies them off this
  // thread), and webhooks 5,000 (stored on this thread: about 100 ms). What still does not fit a
  // source's buffer waits on disk, not dropped (platform/src/scan-source.ts: maxCatchUp, spool).
  const spoolDir = config.SCAN_SPOOL_DIR ?? `${config.DATA_DIR}/scan-spool`
  const spool = (name: string) => openScanBatchSpool(`${spoolDir}/${name}`, { maxBytes: config.SCAN_SPOOL_MAX_MB * 1024 * 1024 })
  const analyticsScans = createBusScanSource(bus, { maxCatchUp: SCAN_BUFFER, spool: spool('analytics') })
  const webhookScans = createBusScanSource(bus, { queue: 'webhooks', maxCatchUp: 5_000, spool: spool('webhooks') })
  services.push(await startAnalytics(ctx, { source: analyticsScans, ingest }))
  // Record events reach the worker as bus requests (stored before the API answers); scans as bus events.
  services.push(await startWebhooks(ctx, { scans: webhookScans }))
  const admission = await createAdmission(config)
  const gateway = createGateway({
    bus,
    admit: admission.admit,
    readiness: { stores: async () => (await Promise.all(services.map((s) => s.ready()))).every(Boolean) },
    optional: admission.optional,
    corsOrigins: config.CORS_ORIGINS,
  })
  // The short-link resolver over the same bus, made when first asked for: main.ts gives it its
  // own listener (SHORT_PORT) with RESOLVER_THREADS=0; otherwise threads of their own answer and
  // this one would follow every change event for nothing. Its scans are events of the bus,
  // which analytics consumes (scans.*).
  const scans = createBusScanPublisher(bus)
  let resolver: Resolver | undefined
  return {
    gateway,
    bus,
    get resolver(): Resolver {
      return (resolver ??= createResolverFromConfig(bus, config, scans.publish))
    },
    /** The resolver's scan publisher: resolver threads (main.ts) hand their scans to it too. */
    scans,
    async stop() {
      resolver?.stop()
      await scans.flush()
      // Both sources at once, each bounded (SCAN_STOP_MS): what they hold and cannot apply by
      // then goes to their spools, and the whole stop stays within its deadline.
      await Promise.all([analyticsScans.stop(), webhookScans.stop()])
      for (const service of services.reverse()) await service.stop()
      await admission.close()
      await bus.close()
      await mongo?.close()
    },
  }
}
