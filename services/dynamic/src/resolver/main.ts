import { loadNatsConfigOrExit, onShutdown } from '@lr/platform/lifecycle'
import { createNatsBus } from '@lr/platform/bus-nats'
import { failWhenClosed } from '@lr/platform/nats-connect'
import { startHealthListener } from '@lr/platform/health-listener'
import { jetstreamCheck } from '@lr/platform/jetstream-refusals'
import { log, startLogging } from '@lr/platform/log'
import { listening, reaching, reachingJetStream, startOrExit, withoutCredentials } from '@lr/platform/startup'
import { openScanSpool } from '@lr/platform/scan-spool'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'
import { ensureScanBatchStream } from '@lr/platform/scan-stream-config'
import { createResolverFromConfig } from './bus-feed'
import { serveShortLinks } from './serve'

// Process entry of the short-link resolver when TRANSPORT=nats: its own listener on SHORT_PORT,
// never behind the gateway. Any number may run; each follows every change event. Its path space
// is codes, so probes (/healthz, /readyz) are on HEALTH_PORT when set, and so are the metrics:
// SHORT_PORT then answers /metrics as any path that is no code (serve.ts).
const config = loadNatsConfigOrExit('resolver', Bun.env)
startLogging('resolver', config.LOG_LEVEL)
const { bus, scans, short, health } = await startOrExit('resolver', async () => {
  const bus = await reaching('NATS', config.NATS_URL, () => createNatsBus(config.NATS_URL, 'resolver', { maxPayload: config.BUS_MAX_PAYLOAD_BYTES }))
  // Scans go through the SCAN_BATCHES stream (durable, deduplicated by batch id); it must exist first.
  await ensureScanBatchStream(await reachingJetStream(config.NATS_URL, bus.connection))
  // Through a broker outage scans wait on local disk, not in memory (README "Logs and metrics").
  const spool = openScanSpool(config.SCAN_SPOOL_DIR ?? `${config.DATA_DIR}/scan-spool`, { maxBytes: config.SCAN_SPOOL_MAX_MB * 1024 * 1024 })
  const scans = createJetStreamScanPublisher(bus.connection, { spool })
  const short = await serveShortLinks({ config, bus, scans, resolver: () => createResolverFromConfig(bus, config, scans.publish) })
  // NATS is optional to readiness (`degraded`, as Redis is to the gateway's): without it the
  // resolver still redirects the codes it has cached and spools their scans, and an outage of the
  // one broker every replica shares would otherwise empty the short-link Service at once. Not
  // ready while its own spool refuses writes: scans then wait in memory only (README "A broker
  // outage costs no scan").
  const checks = { scans: async () => scans.keepsScans() }
  // JetStream refusing its scan batches for want of room (a full store), or not answering on a
  // server that does: degraded too, as it goes on redirecting into its spool (jetstream-refusals.ts).
  const nats = () => bus.ping()
  const readyWithout = { nats, jetstream: jetstreamCheck(bus.connection, nats) }
  const health = config.HEALTH_PORT > 0 ? listening('HEALTH_PORT', config.HEALTH_PORT, () => startHealthListener(config.HEALTH_PORT, checks, readyWithout)) : undefined
  return { bus, scans, short, health }
})
log().info(
  { port: short.port, resolver_threads: short.threads, nats: withoutCredentials(config.NATS_URL), health_port: health?.port ?? null },
  `serving on :${short.port} over ${withoutCredentials(config.NATS_URL)}`,
)
const shutdown = onShutdown('resolver', async () => {
  await short.stop()
  // Scans still held (NATS slow or away) get a few seconds to reach the stream; none when the
  // connection closed for good: they go to the spool at once.
  if (!bus.connection.isClosed()) await Promise.race([scans.flush(), Bun.sleep(5000)])
  scans.close()
  await bus.close()
  await health?.stop()
})
// Scans still held then go to the spool, as on SIGTERM during an outage.
failWhenClosed(bus.connection, shutdown.fail)
