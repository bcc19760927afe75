import { loadConfigOrExit, onShutdown, openMongoIfConfigured, type RunningService, type ServiceContext } from './lifecycle'
import { createNatsBus } from './bus-nats'
import { startHealthListener } from './health-listener'
import { log, startLogging } from './log'

/**
 * Entry point of one service process in TRANSPORT=nats mode: config, NATS bus, optional Mongo,
 * start the service, probes on HEALTH_PORT (when set), and on SIGTERM a graceful stop within the
 * grace period the manifests give (deploy/k8s: 30 s).
 */
export async function runServiceProcess(name: string, start: (ctx: ServiceContext) => Promise<RunningService>) {
  const config = loadConfigOrExit(Bun.env)
  startLogging(name, config.LOG_LEVEL)
  const bus = await createNatsBus(config.NATS_URL, name)
  const mongo = await openMongoIfConfigured(config)
  const service = await start({ bus, config, mongo })
  const health = config.HEALTH_PORT > 0 ? startHealthListener(config.HEALTH_PORT, { store: () => service.ready(), nats: () => bus.ping() }) : undefined
  log().info({ nats: config.NATS_URL, store: config.STORE, health_port: health?.port ?? null }, `serving on ${config.NATS_URL}`)
  // Stores close last: a handler still running when SIGTERM came may need its store to reply.
  onShutdown(name, async () => {
    await bus.stopServing() // no new request or event; running handlers finish, their replies go out
    await service.stop() // its own intake (analytics: the scan consumer), then its store
    await bus.close() // pending publishes flushed, connection closed
    await mongo?.close()
    await health?.stop()
  })
}
