import { Elysia } from 'elysia'
import { probeAll, reportDegraded } from '@lr/platform/health-listener'

/** Name -> probe of each dependency this process needs (store, NATS, Redis...). */
export type ReadinessChecks = Record<string, () => Promise<boolean>>

/**
 * /healthz: the process lives. /readyz: 200 only while every check passes, else 503. `optional`
 * dependencies (Redis: the gateway limits per process without it) never make it 503; those not
 * answering are listed under `degraded` (docs/decisions.md §8). A check that hangs counts as
 * failed after CHECK_TIMEOUT_MS (2 s), as on the services' probe listener: a store whose server
 * froze had held /readyz for 31 s, past any kubelet's probe timeout.
 */
export function healthRoutes(checks: ReadinessChecks, optional: ReadinessChecks = {}) {
  reportDegraded(optional)
  return new Elysia({ name: 'health' })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
    .get(
      '/readyz',
      async ({ set }) => {
        const [required, extra] = await Promise.all([probeAll(checks), probeAll(optional)])
        const ready = required.every(([, ok]) => ok)
        set.status = ready ? 200 : 503
        const degraded = extra.filter(([, ok]) => !ok).map(([name]) => name)
        return { status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries(required), degraded }
      },
      { detail: { hide: true } },
    )
}
