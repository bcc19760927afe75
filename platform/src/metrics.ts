import { Counter, Gauge, type Metric, register } from 'prom-client'
import { LATENCY_BUCKETS } from './http-tallies'
import { scrapeTalliesWith, TallyCounter, TallyHistogram } from './tally'

export { httpDuration, httpRequests, secondsSince } from './http-tallies'

/**
 * Prometheus metrics of this process, in prom-client's default registry: one registry per
 * process, exposed as /metrics on the gateway's port and on HEALTH_PORT, and on the resolver's
 * SHORT_PORT only while HEALTH_PORT is unset (services/dynamic/src/resolver/serve.ts). Names and
 * labels are listed in README "Logs and metrics". Labels stay bounded: routes are patterns
 * (`/v1/qrcodes/:qr_id`), subjects are request subjects, never codes.
 */
// prom-client's collectDefaultMetrics writes `Nan` for the event-loop gauges under Bun, which a
// Prometheus scrape rejects; these read the same figures Bun does have.
const startedAt = Date.now() / 1000
new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch', collect() { this.set(startedAt) } })
new Gauge({ name: 'process_resident_memory_bytes', help: 'Resident memory size', collect() { this.set(process.memoryUsage().rss) } })
/**
 * Each Worker thread is a VM with a heap of its own, which this thread's memoryUsage() leaves
 * out: the resolver's threads, the relay's, the ingestion Worker and the export Workers hand
 * theirs over in the messages they already send (a scrape's tallies, the lag every 5 s, a batch's
 * answer at most once a second, each export chunk), by thread name, until `forgetThreadHeap`.
 */
const threadHeaps = new Map<string, number>()
/** A Worker's heap in use, as it last said (`thread`: resolver-1, scan-relay, ingest...). */
export const reportThreadHeap = (thread: string, bytes: number) => void threadHeaps.set(thread, bytes)
export const forgetThreadHeap = (thread: string) => void threadHeaps.delete(thread)
const heapsUsed = () => [['main', process.memoryUsage().heapUsed] as const, ...threadHeaps]
new Gauge({
  name: 'process_heap_used_bytes',
  help: "JavaScript heap in use: every thread's (the main thread's and each Worker's as it last said), summed; by thread in lr_thread_heap_used_bytes",
  collect() {
    this.set(heapsUsed().reduce((sum, [, bytes]) => sum + bytes, 0))
  },
})
new Gauge({
  name: 'lr_thread_heap_used_bytes',
  help: 'JavaScript heap in use by thread: main, and each Worker as it last said (resolver-N, scan-relay, ingest, export-<store>)',
  labelNames: ['thread'] as const,
  collect() {
    this.reset()
    for (const [thread, bytes] of heapsUsed()) this.set({ thread }, bytes)
  },
})
// A total only grows: a counter, as Prometheus's own client writes it (rate() expects one).
new Counter({
  name: 'process_cpu_seconds_total',
  help: 'User and system CPU time spent in seconds',
  collect() {
    const { user, system } = process.cpuUsage()
    this.reset()
    this.inc((user + system) / 1e6)
  },
})

// The series every request updates are tallies (./tally): the same lines, a fraction of the cost.
// The HTTP ones are in ./http-tallies, which a resolver thread loads without this file.
scrapeTalliesWith(register)
export const rateLimited = new Counter({
  name: 'lr_rate_limited_total',
  help: 'Requests answered 429, by reason (per_second: the burst limit; daily: the quota)',
  labelNames: ['reason'] as const,
})
/**
 * 1 while the gateway's shared limiter (LIMITER=redis) cannot reach Redis and each gateway limits
 * on its own, else 0: what /readyz lists as `degraded`, for an alert. Only in a gateway with
 * LIMITER=redis (registered by watchRateLimiter), so no other process reports a limiter it lacks.
 */
const rateLimiterDegraded = new Gauge({
  name: 'lr_rate_limiter_degraded',
  help: '1 while Redis does not answer the shared rate limiter (LIMITER=redis) and this gateway limits on its own, else 0',
  registers: [],
  collect() {
    this.set(limiterDegraded?.() ? 1 : 0)
  },
})
let limiterDegraded: (() => boolean) | undefined
/** Reports the shared limiter's state in lr_rate_limiter_degraded, read at each scrape. */
export function watchRateLimiter(degraded: () => boolean): void {
  if (!register.getSingleMetric('lr_rate_limiter_degraded')) register.registerMetric(rateLimiterDegraded)
  limiterDegraded = degraded
}
/**
 * Series that mean something only in some processes (the resolver's scans, webhooks' deliveries,
 * a settled publish's answers) are made with `registers: []` and put in this process's registry
 * by the code they belong to, when it starts: no other process lists them at 0 (auth had listed
 * lr_scans_buffered 0 and lr_webhook_deliveries_given_up_total 0). In one process (`bun start`)
 * each part registers its own into the one registry; a second call is a no-op.
 */
export function reportMetrics(...metrics: (Metric | TallyCounter<string>)[]): void {
  for (const metric of metrics) {
    // prom-client's metrics have their name at run time, though its types do not say so.
    const { name } = metric as unknown as { name: string }
    if (!register.getSingleMetric(name)) register.registerMetric(metric as Metric)
  }
}
export const busRequestDuration = new TallyHistogram(
  'lr_bus_request_duration_seconds',
  'Bus request-reply round trips as the caller sees them, by subject and outcome (ok; refused: a 4xx answer, the client\'s to act on; error; timeout; unavailable)',
  ['subject', 'outcome'],
  LATENCY_BUCKETS,
)
export const busHandlerDuration = new TallyHistogram(
  'lr_bus_handler_duration_seconds',
  'Time a service spent answering a bus request, by subject and outcome (ok; refused: a 4xx answer; error: any other failure)',
  ['subject', 'outcome'],
  LATENCY_BUCKETS,
)
/** Registered by a NATS bus's first settled publish (nats-settlers.ts): dynamic's, over NATS. */
export const eventsUnsettled = new Counter({
  name: 'lr_bus_events_unsettled_total',
  help: 'Over NATS, answers a settled publish (a dynamic code\'s change) did not get in time from a subscriber that settles its subject (a resolver replica)',
  registers: [],
})
// A tally: an overloaded service may shed thousands a second.
export const busRequestsExpired = new TallyCounter(
  'lr_bus_requests_expired_total',
  'Bus requests a service did not run because their deadline had passed when it got to them (NATS), by subject',
  ['subject'],
)
// A tally as well: counted on the resolver's hot path. This and the three below are the
// resolver's (and bun start's): registered by its scan publisher (scan-stream-publisher.ts,
// scan-publisher.ts) and spool (scan-spool-guard.ts).
export const scansPublished = new TallyCounter('lr_scans_published_total', 'Scans the resolver handed to the scan stream (acknowledged by it)', [], false)
const published = scansPublished.labels({})
/** One more scan handed on (acknowledged by JetStream, or published on the in-process bus). */
export const countScanPublished = (scans = 1) => published.inc(scans)
const bufferedSources = new Set<() => number>()
/** Counts a publisher's held scans into lr_scans_buffered while it lives; returns the release. */
export function trackBufferedScans(pending: () => number): () => void {
  bufferedSources.add(pending)
  return () => bufferedSources.delete(pending)
}
export const scansBuffered = new Gauge({
  name: 'lr_scans_buffered',
  help: 'Scans the resolver holds that the stream has not acknowledged yet',
  registers: [],
  collect() {
    let sum = 0
    for (const pending of bufferedSources) sum += pending()
    this.set(sum)
  },
})
/**
 * Analytics' side of the scans the resolver publishes (lr_scans_published_total): every scan
 * event it took in, by what became of it. `counted`: stored for the first time, so in
 * total_scans (or fallback_scans); `repeated`: stored already (a batch delivered again after a
 * restart or a lost acknowledgement, applied once by scan_id); `bot`, `malformed`: dropped.
 */
export const scansIngested = new Counter({
  name: 'lr_scans_ingested_total',
  help: 'Scan events analytics took in, by outcome (counted: stored for the first time; repeated: stored already; bot, malformed: dropped)',
  labelNames: ['outcome'] as const,
})
export const scansDropped = new Counter({ name: 'lr_scans_dropped_total', help: 'Scans the resolver had to drop because its buffer was full', registers: [] })
export const scansLost = new Counter({ name: 'lr_scans_lost_total', help: 'Scans the resolver lost because its spool on disk failed (a write refused: a full disk, a directory it may not write)', registers: [] })
export const recordEventsLost = new Counter({
  name: 'lr_record_events_lost_total',
  help: 'Record events of stored writes that records or dynamic held while JetStream was away and lost, by cause (spool_full: past SCAN_SPOOL_MAX_MB; held_max: past the batches held in memory; unreadable: in a spool file that could not be read back)',
  labelNames: ['cause'] as const,
})
export const jetstreamRefusals = new Counter({
  name: 'lr_jetstream_refusals_total',
  help: "Writes of this process JetStream refused for want of room, by stream and reason (max_bytes, max_msgs, max_msgs_per_subject: the stream's bound with discard=new; insufficient_resources: the server's store is full; limits: the account's)",
  labelNames: ['stream', 'reason'] as const,
})
export const jetstreamStoreFull = new Gauge({
  name: 'lr_jetstream_store_full',
  help: "1 while JetStream refuses this process's writes to the stream for want of room (from the first refusal until a write is taken again), else 0",
  labelNames: ['stream'] as const,
})
export const consumerPending = new Gauge({
  name: 'lr_jetstream_consumer_pending',
  help: 'Messages of a JetStream consumer not yet delivered (lag), by stream and consumer',
  labelNames: ['stream', 'consumer'] as const,
})
export const consumerAckPending = new Gauge({
  name: 'lr_jetstream_consumer_ack_pending',
  help: 'Messages of a JetStream consumer delivered but not acknowledged yet, by stream and consumer',
  labelNames: ['stream', 'consumer'] as const,
})
export const storeDuration = new TallyHistogram(
  'lr_store_operation_duration_seconds',
  'Store operations, by store, operation (port method) and outcome (ok; refused: a unique key refused the write, or a 4xx answer; error)',
  ['store', 'operation', 'outcome'],
  LATENCY_BUCKETS,
)

// The webhooks worker's: registered by createDeliveryWorker.
export const webhookAttempts = new Counter({
  name: 'lr_webhook_attempts_total',
  help: 'Webhook delivery attempts, by event type and outcome (delivered: a 2xx; failed: anything else, retried or given up)',
  labelNames: ['event_type', 'outcome'] as const,
  registers: [],
})
export const webhookGivenUp = new Counter({
  name: 'lr_webhook_deliveries_given_up_total',
  help: 'Webhook deliveries that failed for the whole retry window and are not retried any more',
  registers: [],
})
export const webhookEndpointsDisabled = new Counter({
  name: 'lr_webhook_endpoints_disabled_total',
  help: 'Webhook endpoints disabled because every delivery to them failed for the retry window',
  registers: [],
})

export const listCacheLookups = new Counter({
  name: 'lr_list_cache_lookups_total',
  help: 'List requests of a service by outcome: hit (answered from the kept reply), miss (read from the store)',
  labelNames: ['kind', 'outcome'] as const,
})

export const listPages = new Counter({
  name: 'lr_list_pages_total',
  help: 'List pages a gateway answered, by source: sent (the service sent the page), kept (unchanged since this gateway last answered it)',
  labelNames: ['source'] as const,
})

export const exportChunks = new Counter({
  name: 'lr_export_chunks_total',
  help: 'Record export chunks a service made, by where: ahead (its export Worker read it before it was asked), worker (read when asked), this_thread (no Worker, or the Worker failed)',
  labelNames: ['kind', 'made'] as const,
})

export const exportsCutShort = new Counter({
  name: 'lr_exports_cut_short_total',
  help: 'CSV exports the gateway ended early because a chunk after the first failed (the 200 was sent: the body ends without its last chunk), by bus subject',
  labelNames: ['subject'] as const,
})

export const sqliteCheckpointFailures = new Counter({
  name: 'lr_sqlite_checkpoint_failures_total',
  help: "Checkpoints of a SQLite file that another thread makes (bun start's ingestion Worker) and that failed, by file",
  labelNames: ['file'] as const,
})

export const databaseClockOffset = new Gauge({
  name: 'lr_database_clock_offset_seconds',
  help: "The database server's clock minus this process's, at the last reading (platform/src/mongo-clock.ts); STORE=mongo only",
  labelNames: ['store'] as const,
})

/** What runs before each scrape: gathers what other threads counted into this thread's registry. */
const gatherers = new Set<() => Promise<void>>()

/** Runs `gather` before every scrape of this thread's registry (until the returned function is called). */
export function gatherBeforeScrape(gather: () => Promise<void>): () => void {
  gatherers.add(gather)
  return () => void gatherers.delete(gather)
}

/** The registry in Prometheus' text format, with what the other threads counted gathered first. */
export async function metricsText(): Promise<string> {
  await Promise.all([...gatherers].map((gather) => gather()))
  return register.metrics()
}

/** The content type of the metrics text (Prometheus' text format). */
export const METRICS_CONTENT_TYPE: string = register.contentType

/** GET /metrics: the registry in Prometheus' text format. */
export async function metricsResponse(): Promise<Response> {
  return new Response(await metricsText(), { headers: { 'content-type': METRICS_CONTENT_TYPE, 'cache-control': 'no-store' } })
}

