import { Elysia } from 'elysia'
import { log } from '@lr/platform/log'
import { httpDuration, httpRequests, metricsResponse, secondsSince } from '@lr/platform/metrics'
import { principalIfVerified } from '../context'
import { unavailableCauseOf } from './error-handler'

const started = new WeakMap<Request, number>()
/** Requests whose body is still being sent at onAfterResponse (bodyEndsLater), until it ends. */
const bodyEnds = new WeakMap<Request, Promise<void>>()

/**
 * For an answer whose body goes on after its headers, a CSV export (csv-stream.ts): the request
 * is counted, timed and logged when the returned function is called (its last chunk handed on,
 * the body cut short, or the client gone), not at onAfterResponse, which Elysia runs once the
 * headers are out. An export of 0.8 s had been timed as 18 ms, its first chunk.
 */
export function bodyEndsLater(request: Request): () => void {
  let ended!: () => void
  bodyEnds.set(request, new Promise<void>((resolve) => (ended = resolve)))
  return ended
}

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
    const status = statusOf(set.status)
    const labels = { server: 'api', route: route || 'unmatched', method: request.method, status: String(status) }
    const requestId = set.headers['x-request-id']
    const keyId = principalIfVerified(request)?.key_id ?? null
    const cause = unavailableCauseOf(request)
    const answered = () => {
      const seconds = secondsSince(begin)
      httpRequests.inc(labels)
      httpDuration.observe(labels, seconds)
      const line = { method: request.method, route: labels.route, path, status, duration_ms: Math.round(seconds * 1e4) / 10, request_id: requestId, key_id: keyId, ...cause }
      if (status >= 500) log().error(line, 'request')
      else log().info(line, 'request')
    }
    const body = bodyEnds.get(request)
    if (body) void body.then(answered)
    else answered()
  })
  .get('/metrics', () => metricsResponse(), { detail: { hide: true } })
