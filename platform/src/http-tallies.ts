import { TallyCounter, TallyHistogram } from './tally'

/**
 * The series every HTTP answer updates, as tallies. Apart from ./metrics.ts so that a resolver
 * thread counts its answers without loading prom-client (its main thread scrapes them).
 */
/**
 * Bounds of every latency histogram (seconds). One set spans what they time: a cached redirect
 * takes 2.5 to 5 µs (bun start under wrk: 23 % below 2.5 µs, 59 % up to 5 µs) and a store read on
 * SQLite tens of µs, where the lowest bound had been 0.5 ms (99.9 % of 200,000 redirects in the
 * first bucket, no quantile below it); a CSV export of a large library takes seconds to a minute
 * over NATS, where the highest had been 10 s. A value is placed by a walk up from the lowest
 * bound, so a redirect's takes one to three comparisons.
 */
export const LATENCY_BUCKETS = [
  0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
  0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
]

export const httpRequests = new TallyCounter(
  'lr_http_requests_total',
  'HTTP requests answered, by server, route pattern, method and status',
  ['server', 'route', 'method', 'status'],
)
export const httpDuration = new TallyHistogram(
  'lr_http_request_duration_seconds',
  'Time from request to response, by server, route pattern, method and status',
  ['server', 'route', 'method', 'status'],
  LATENCY_BUCKETS,
)

/** Seconds since `start` (a performance.now() reading). */
export const secondsSince = (start: number) => (performance.now() - start) / 1000
