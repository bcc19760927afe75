import type { NatsConnection } from 'nats'
import { loadNatsConfigOrExit, onShutdown, openMongoIfConfigured, type RunningService, type ServiceContext, type Shutdown } from './lifecycle'
import { failWhenClosed } from './nats-connect'
import { createNatsBus } from './bus-nats'
import { startHealthListener } from './health-listener'
import { jetstreamCheck, jetstreamTakesWrites } from './jetstream-refusals'
import { listening, reaching, reachingJetStream, startOrExit, withoutCredentials } from './startup'

/**
 * What only a TRANSPORT=nats process has, handed to its entry point's start function: the NATS
 * connection under its bus (analytics builds its JetStream scan source on it). Services never
 * reach it through the Bus itself, which stays transport-neutral.
 */
export interface NatsProcess {
  connection: NatsConnection
  /** Shutdown.fail of the process: a part that can no longer work (analytics' relay) stops it so. */
  fail: Shutdown['fail']
}
import { log, startLogging } from './log'

/** What a service process needs of its NATS server beyond request-reply. */
export interface ServiceProcessOptions {
  /**
   * What it needs JetStream for: `required`, it cannot work without it (its durable consumers),
   * so a server without it stops the start with one line saying so; `held`, records and dynamic,
   * which start without it and hold their events. Either way /readyz lists `jetstream` under
   * `degraded` while it does not answer; auth, which uses none, never does.
   */
  jetstream?: 'required' | 'held'
}

/**
 * Entry point of one service process in TRANSPORT=nats mode: config, NATS bus, optional Mongo,
 * start the service, probes on HEALTH_PORT (when set), and on SIGTERM a graceful stop within the
 * grace period the manifests give (deploy/k8s: 30 s). A start-up failure is one line and exit 1.
 */
export async function runServiceProcess(name: string, start: (ctx: ServiceContext, nats: NatsProcess) => Promise<RunningService>, opts: ServiceProcessOptions = {}) {
  const config = loadNatsConfigOrExit(name, Bun.env)
  startLogging(name, config.LOG_LEVEL)
  let shutdown: Shutdown | undefined
  // Before the stop is registered (still starting), a failure is one line and exit 1 as any other of the start-up.
  const fail: Shutdown['fail'] = (fields, message) => {
    if (shutdown) return shutdown.fail(fields, message)
    log().error(fields, message)
    process.exit(1)
  }
  const { bus, mongo, service, health } = await startOrExit(name, async () => {
    const bus = await reaching('NATS', config.NATS_URL, () => createNatsBus(config.NATS_URL, name, { maxPayload: config.BUS_MAX_PAYLOAD_BYTES }))
    if (opts.jetstream === 'required') await reachingJetStream(config.NATS_URL, bus.connection)
    const mongo = await openMongoIfConfigured(config)
    const service = await start({ bus, config, mongo }, { connection: bus.connection, fail })
    const checks = { store: () => service.ready(), nats: () => bus.ping() }
    // Records' and dynamic's record events, analytics' ingest lease and scans, the webhooks'
    // consumers: refused for want of room, or JetStream not answering (jetstream-refusals.ts).
    const optional = { jetstream: opts.jetstream ? jetstreamCheck(bus.connection, checks.nats) : jetstreamTakesWrites }
    const health = config.HEALTH_PORT > 0 ? listening('HEALTH_PORT', config.HEALTH_PORT, () => startHealthListener(config.HEALTH_PORT, checks, optional)) : undefined
    return { bus, mongo, service, health }
  })
  log().info({ nats: withoutCredentials(config.NATS_URL), store: config.STORE, health_port: health?.port ?? null }, `serving on ${withoutCredentials(config.NATS_URL)}`)
  // Stores close last: a handler still running when SIGTERM came may need its store to reply.
  shutdown = onShutdown(name, async () => {
    await bus.stopServing() // no new request or event; running handlers finish, their replies go out
    await service.stop() // its own intake (analytics: the scan consumer), then its store
    await bus.close() // pending publishes flushed, connection closed
    await mongo?.close()
    await health?.stop()
  })
  failWhenClosed(bus.connection, shutdown.fail)
}
