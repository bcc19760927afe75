import { Elysia } from 'elysia'

/** Name -> probe of each dependency this process needs (store, NATS, Redis...). */
export type ReadinessChecks = Record<string, () => Promise<boolean>>

const answers = async (checks: ReadinessChecks) =>
  Promise.all(Object.entries(checks).map(async ([name, check]) => [name, await check().catch(() => false)] as const))

/**
 * /healthz: the process lives. /readyz: 200 only while every check passes, else 503. `optional`
 * dependencies (Redis: the gateway limits per process without it) never make it 503; those not
 * answering are listed under `degraded` (docs/decisions.md §8).
 */
export const healthRoutes = (checks: ReadinessChecks, optional: ReadinessChecks = {}) =>
  new Elysia({ name: 'health' })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
    .get(
      '/readyz',
      async ({ set }) => {
        const [required, extra] = await Promise.all([answers(checks), answers(optional)])
        const ready = required.every(([, ok]) => ok)
        set.status = ready ? 200 : 503
        const degraded = extra.filter(([, ok]) => !ok).map(([name]) => name)
        return { status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries(required), degraded }
      },
      { detail: { hide: true } },
    )
