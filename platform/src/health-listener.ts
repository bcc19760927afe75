import { JSON_CONTENT_TYPE } from '@lr/proto'
import { Gauge } from 'prom-client'
import { metricsResponse, reportMetrics } from './metrics'
import { requestUrlOf } from './request-url'

/** Name -> probe of each dependency a process needs (its store, NATS...). */
export type HealthChecks = Record<string, () => Promise<boolean>>

export interface HealthListener {
  /** The port it listens on (the one asked for, or the one picked for port 0). */
  port: number
  stop(): Promise<void>
}

/** A probe that hangs counts as failed: a kubelet gives up after its own timeout anyway. */
export const CHECK_TIMEOUT_MS = 2_000

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': JSON_CONTENT_TYPE, 'cache-control': 'no-store' } })

async function probe(check: () => Promise<boolean>): Promise<boolean> {
  let timer: Timer | undefined
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS)))
  try {
    return await Promise.race([check().then((ok) => ok === true, () => false), timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** Each check's answer, by name: false for one that fails or hangs past CHECK_TIMEOUT_MS. */
export const probeAll = (checks: HealthChecks) => Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await probe(check)] as const))

let degradedChecks: HealthChecks = {}
/**
 * What /readyz lists under `degraded`, for an alert: a scrape cannot read /readyz's body, and
 * before this only the gateway's Redis (lr_rate_limiter_degraded) and JetStream's refusals for
 * want of room (lr_jetstream_store_full) showed in the metrics, not a resolver cut off from NATS.
 * Probed at each scrape, as /readyz probes them (a hung check counts as failed after 2 s).
 */
const dependencyDegraded = new Gauge({
  name: 'lr_dependency_degraded',
  help: "1 while an optional dependency of this process does not answer (what its /readyz lists under degraded: the gateway's redis, the resolver's nats, jetstream), else 0",
  labelNames: ['dependency'] as const,
  registers: [],
  async collect() {
    const answers = await probeAll(degradedChecks)
    this.reset()
    for (const [dependency, ok] of answers) this.set({ dependency }, ok ? 0 : 1)
  },
})
/**
 * Lists the `optional` dependencies of /readyz in lr_dependency_degraded (none: no series). A
 * process has one /readyz; the last one made wins, so a test's earlier apps are not probed.
 */
export function reportDegraded(optional: HealthChecks): void {
  degradedChecks = optional
  if (Object.keys(optional).length > 0) reportMetrics(dependencyDegraded)
}

/**
 * /readyz's answer, in the gateway's shape: 200 only while every check passes, else 503. An
 * `optional` dependency (one the process goes on serving without) never makes it 503: those not
 * answering are listed under `degraded`, present only where a process has optional ones.
 */
export async function readiness(checks: HealthChecks, optional: HealthChecks = {}): Promise<Response> {
  const [entries, extra] = await Promise.all([probeAll(checks), probeAll(optional)])
  const ready = entries.every(([, ok]) => ok)
  const degraded = extra.length ? { degraded: extra.filter(([, ok]) => !ok).map(([name]) => name) } : {}
  return json(ready ? 200 : 503, { status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries(entries), ...degraded })
}

/**
 * The probe listener of a process without its own HTTP API (HEALTH_PORT): `/healthz` is 200
 * while the process lives, `/readyz` 200 while every check passes (`optional` ones only listed
 * under `degraded`), `/metrics` the process's Prometheus metrics. Port 0 picks a free port.
 */
export function startHealthListener(port: number, checks: HealthChecks, optional: HealthChecks = {}): HealthListener {
  reportDegraded(optional)
  const server = Bun.serve({
    port,
    hostname: '0.0.0.0',
    fetch(request) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return json(405, { error: 'method not allowed' })
      const path = requestUrlOf(request.url).pathname
      if (path === '/healthz') return json(200, { status: 'ok' })
      if (path === '/readyz') return readiness(checks, optional)
      if (path === '/metrics') return metricsResponse()
      return json(404, { error: 'not found' })
    },
  })
  return { port: server.port!, stop: () => server.stop(true) }
}
