import { type Bus, type Config, DEV_VISITOR_HASH_KEY, type ScanPublisher } from '@lr/proto'
import { usableCpus } from '@lr/platform/cpus'
import { errorFields, log } from '@lr/platform/log'
import { metricsResponse } from '@lr/platform/metrics'
import { listening } from '@lr/platform/startup'
import { observeResolver } from './observe'
import { type Resolver, resolverSettingsOf } from './resolver'
import { startResolverThreads } from './threads'

export interface ShortLinks {
  readonly port: number
  /** Threads answering (0: this thread). */
  readonly threads: number
  /** Stops listening, answers the requests under way and hands every scan on. */
  stop(): Promise<void>
}

/**
 * RESOLVER_THREADS unset: one thread per CPU the process can keep busy (usableCpus: its cores,
 * fewer under a container's CPU limit), and none with only one: a thread would then take turns
 * with the main thread that holds its bus, and add a hop to every lookup and scan. At most 64, as
 * the setting.
 */
export const defaultResolverThreads = (cpus = usableCpus()): number => (cpus > 1 ? Math.min(cpus, 64) : 0)

/**
 * Short links on SHORT_PORT: on RESOLVER_THREADS threads of their own (unset:
 * defaultResolverThreads), which share the port, or with 0 on this thread by `resolver()`. A
 * thread that dies stops the process with one error line: its share of the connections could no
 * longer be answered.
 *
 * /metrics is answered there only while HEALTH_PORT is unset (0). Every path of the short-link
 * host must reach SHORT_PORT, so no ingress rule can keep a path of it from the internet; with
 * HEALTH_PORT set the metrics are served there (the resolver process; `bun start` has them on
 * PORT), and /metrics on SHORT_PORT is the 404 of any path that is no code. Unset, the resolver
 * process has no other listener for them.
 */
export async function serveShortLinks(options: { config: Config; bus: Bus; scans: ScanPublisher; resolver: () => Resolver }): Promise<ShortLinks> {
  const { config } = options
  warnOfPublicVisitorKey(config)
  const threads = config.RESOLVER_THREADS ?? defaultResolverThreads()
  const answerMetrics = config.HEALTH_PORT === 0
  if (threads === 0) {
    const resolver = options.resolver()
    const observed = observeResolver(resolver.fetch, answerMetrics ? metricsResponse : undefined)
    const server = listening('SHORT_PORT', config.SHORT_PORT, () => Bun.serve({ port: config.SHORT_PORT, hostname: '0.0.0.0', ...observed }))
    return {
      port: server.port!,
      threads,
      async stop() {
        await server.stop()
        resolver.stop()
      },
    }
  }
  const running = await startResolverThreads({
    threads,
    port: config.SHORT_PORT,
    bus: options.bus,
    publishScans: options.scans.publishBatch,
    settings: resolverSettingsOf(config),
    answerMetrics,
    failed: (error) => {
      log().error(errorFields(error), 'a resolver thread ended: stopping, short links can no longer all be answered')
      process.exit(1)
    },
  })
  return { port: running.port, threads, stop: running.stop }
}

/**
 * One `warn` line at start when VISITOR_HASH_KEY is the public development value. A visitor id is
 * HMAC-SHA256(key, address + user agent), and every scan event carries both (SCANS, `scan`
 * webhooks, which go outside): under a public key, trying every IPv4 address with that user agent
 * (1.5 million a second on one core here) gives the client's address back, which the id exists
 * to withhold.
 * Not a random key per start instead, as for cursors: visitor ids must stay the same across
 * restarts, or every visitor counts again as unique.
 */
function warnOfPublicVisitorKey(config: Pick<Config, 'VISITOR_HASH_KEY'>): void {
  if (config.VISITOR_HASH_KEY !== DEV_VISITOR_HASH_KEY) return
  log().warn({ setting: 'VISITOR_HASH_KEY' }, 'VISITOR_HASH_KEY is not set: visitor ids use a public development key, so whoever reads a scan event (SCANS, a scan webhook: its visitor_id and user_agent) can recover the client\'s IPv4 address by trying them all; set VISITOR_HASH_KEY (openssl rand -hex 32), the same for every resolver, and keep it')
}
