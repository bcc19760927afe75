import { Elysia } from 'elysia'

/** Name -> probe of each dependency this process needs (store, NATS, Redis...). */
export type ReadinessChecks = Record<string, () => Promise<boolean>>

/** /healthz: the process lives. /readyz: 200 only while every dependency answers, else 503. */
export const healthRoutes = (checks: ReadinessChecks) =>
  new Elysia({ name: 'health' })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
    .get(
      '/readyz',
      async ({ set }) => {
        const entries = await Promise.all(
          Object.entries(checks).map(async ([name, check]) => [name, await check().catch(() => false)] as const),
        )
        const ready = entries.every(([, ok]) => ok)
        set.status = ready ? 200 : 503
        return { status: ready ? 'ready' : 'unavailable', checks: Object.fromEntries(entries) }
      },
      { detail: { hide: true } },
    )
