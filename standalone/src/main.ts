import { loadConfigOrExit, onShutdown } from '@lr/platform/lifecycle'
import { listening, startOrExit } from '@lr/platform/startup'
import { log, startLogging } from '@lr/platform/log'
import { checkpointElsewhere } from '@lr/platform/sqlite'
import { serveShortLinks } from '@lr/dynamic'
import { directoriesToHold, holdDataDir } from './data-dir-lock'
import { startStandalone } from './standalone'

/**
 * `bun start`: the whole product in this process, the API on PORT and short links on SHORT_PORT,
 * over the in-process bus. TRANSPORT=nats is refused, not ignored: the operator meant the
 * processes of `bun run start:nats`, and the admin command line would go to NATS, not to this.
 */
if (Bun.env.TRANSPORT && Bun.env.TRANSPORT !== 'memory') {
  console.error(`[config] invalid setting TRANSPORT=${JSON.stringify(Bun.env.TRANSPORT)}: bun start runs every service in this process on the in-process bus (memory); the processes over NATS start with bun run start:nats`)
  process.exit(2)
}
const config = loadConfigOrExit({ ...Bun.env, TRANSPORT: 'memory' })
startLogging('standalone', config.LOG_LEVEL)
// The SQLite files' checkpoints (and their syncs) off the thread that answers the API: the
// ingestion Worker makes them (platform/src/sqlite.ts).
if (config.STORE === 'sqlite') checkpointElsewhere()
const { lock, product, server, short } = await startOrExit('standalone', async () => {
  // One bun start per directory it writes (data-dir-lock.ts): DATA_DIR for its SQLite stores and
  // the scan spools under it; SCAN_SPOOL_DIR when that is elsewhere.
  const locks = directoriesToHold(config).map(({ dir, setting }) => holdDataDir(dir, setting))
  const lock = { release: () => locks.forEach((held) => held.release()) }
  const product = await startStandalone(config)
  // Elysia shares the port by default (reusePort): a second product started on PORT would then
  // start and take a share of its connections, answering them from its own stores.
  const server = listening('PORT', config.PORT, () => product.gateway.listen({ port: config.PORT, hostname: '0.0.0.0', reusePort: false }))
  // Short links on threads of their own (RESOLVER_THREADS), their scans handed to the product's publisher.
  const short = await serveShortLinks({ config, bus: product.bus, scans: product.scans, resolver: () => product.resolver })
  return { lock, product, server, short }
})
log().info(
  { port: server.server?.port, short_port: short.port, resolver_threads: short.threads, store: config.STORE, data_dir: config.DATA_DIR },
  `one process: API on :${server.server?.port}, short links on :${short.port}`,
)
onShutdown('standalone', async () => {
  await server.stop()
  await short.stop()
  await product.stop()
  lock.release()
})
