import { TallyCounter, TallyHistogram } from './tally'

/**
 * The series every HTTP answer updates, as tallies. Apart from ./metrics.ts so that a resolver
 * thread counts its answers without loading prom-client (its main thread scrapes them).
 */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

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
