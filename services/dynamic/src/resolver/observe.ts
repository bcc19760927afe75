import { errorFields, log } from '@lr/platform/log'
import { httpDuration, httpRequests, secondsSince } from '@lr/platform/http-tallies'
import { atMostEvery } from '@lr/platform/log-throttle'
import { requestUrlOf } from '@lr/platform/request-url'

type Fetch = (request: Request, server?: any) => Response | Promise<Response>

/**
 * The resolver's HTTP listener with metrics, as Bun.serve options: every answer counted and timed
 * by status (lr_http_requests_total / lr_http_request_duration_seconds, server="resolver"), and
 * a log line for error answers (5xx): at most one per 10 s and status, with `repeated`. The host
 * is public: while the dynamic service does not answer, any client can have a 503 per request
 * (codes the resolver does not hold), and a line each had been a flood at the client's rate
 * (30,920 lines in 3 s from one wrk); the metrics count every one. A 302 writes no log line: at
 * tens of thousands per second the scan stream is its record. `metrics`, when given, answers /metrics (a reserved word, never
 * a code) as a route Bun matches itself, so a redirect pays no check for it: metricsResponse, or
 * in a resolver thread a question to the main thread, whose registry holds the whole process's
 * (this file loads no prom-client, for that thread's sake). Without it /metrics is a path like
 * any other that is no code: the resolver's 404, counted.
 */
export function observeResolver(fetch: Fetch, metrics?: () => Promise<Response>): { routes: Record<string, () => Promise<Response>>; fetch: Fetch } {
  // By status for GET and HEAD, the redirects' methods, without a string built per answer; any
  // other method (a 405) by its name as well: one key per status had counted a PUT's 405 under
  // the first method that thread answered 405 (POST). Bun answers only the methods it knows.
  const children = new Map<number | string, { count: { inc(): void }; time: { observe(v: number): void } }>()
  const series = (request: Request, status: number) => {
    const method = request.method
    const key = method === 'GET' ? status * 2 : method === 'HEAD' ? status * 2 + 1 : `${method} ${status}`
    let child = children.get(key)
    if (!child) {
      const labels = { server: 'resolver', route: '/:code', method, status: String(status) }
      child = { count: httpRequests.labels(labels), time: httpDuration.labels(labels) }
      children.set(key, child)
    }
    return child
  }
  const repeated = (count: number) => (count > 0 ? { repeated: count } : {})
  const failedLine = atMostEvery(10_000)
  const errorLines = new Map<number, ReturnType<typeof atMostEvery>>()
  const failed = (request: Request, error: unknown) => {
    failedLine((count) => log().error({ method: request.method, path: requestUrlOf(request.url).pathname, ...errorFields(error), ...repeated(count) }, 'resolver failed'))
    return new Response('Temporarily unavailable, please retry.\n', { status: 503, headers: { 'retry-after': '1', 'cache-control': 'private, no-store' } })
  }
  const done = (request: Request, started: number, response: Response): Response => {
    const seconds = secondsSince(started)
    const { count, time } = series(request, response.status)
    count.inc()
    time.observe(seconds)
    if (response.status >= 500) {
      const status = response.status
      let line = errorLines.get(status)
      if (!line) errorLines.set(status, (line = atMostEvery(10_000)))
      line((count) => log().error({ method: request.method, route: '/:code', path: requestUrlOf(request.url).pathname, status, duration_ms: Math.round(seconds * 1e4) / 10, ...repeated(count) }, 'request'))
    }
    return response
  }
  // An answer given at once is observed and returned at once: no promise's turn for a known code.
  const observed: Fetch = (request, server) => {
    const started = performance.now()
    let answer: Response | Promise<Response>
    try {
      answer = fetch(request, server)
    } catch (error) {
      return done(request, started, failed(request, error))
    }
    if (answer instanceof Promise) return answer.then((response) => done(request, started, response), (error) => done(request, started, failed(request, error)))
    return done(request, started, answer)
  }
  return { routes: metrics ? { '/metrics': metrics } : {}, fetch: observed }
}
