import { Elysia } from 'elysia'
import { log } from '@lr/platform/log'
import { httpDuration, httpRequests, metricsResponse, secondsSince } from '@lr/platform/metrics'
import { principalIfVerified } from '../context'
import { unavailableCauseOf } from './error-handler'

const started = new WeakMap<Request, number>()

/** Elysia's `set.status` as a number (it may hold a numeric string; unset is 200). */
export const statusOf = (status: unknown) => (typeof status === 'number' ? status : Number(status) || 200)

/**
 * One access-log line and one metrics sample per API request, whatever its outcome (200, 404,
 * 429, 500...): method, route pattern, status, duration, request id and the key's id, never
 * the key; a 503 or 504 also with its `code` and `detail` for the operator. GET /metrics serves the process's registry (unauthenticated, like the probes: keep
 * it inside the cluster; see deploy/README.md).
 */
export const observe = new Elysia({ name: 'observe' })
  .onRequest(({ request }) => {
    started.set(request, performance.now())
  })
  .onAfterResponse({ as: 'global' }, ({ request, set, route, path }) => {
    const begin = started.get(request)
    if (begin === undefined || path === '/metrics') return
    const seconds = secondsSince(begin)
    const status = statusOf(set.status)
    const labels = { server: 'api', route: route || 'unmatched', method: request.method, status: String(status) }
    httpRequests.inc(labels)
    httpDuration.observe(labels, seconds)
    const line = {
      method: request.method,
      route: labels.route,
      path,
      status,
      duration_ms: Math.round(seconds * 1e4) / 10,
      request_id: set.headers['x-request-id'],
      key_id: principalIfVerified(request)?.key_id ?? null,
      ...unavailableCauseOf(request),
    }
    if (status >= 500) log().error(line, 'request')
    else log().info(line, 'request')
  })
  .get('/metrics', () => metricsResponse(), { detail: { hide: true } })
