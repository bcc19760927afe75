/** Attempts in flight at once, per worker. */
export const CONCURRENCY = 32
/**
 * Attempts in flight to one endpoint at once, per worker. An attempt to an endpoint that answers
 * slowly, or never, holds its slot until WEBHOOK_TIMEOUT_MS: uncapped, one library's slow endpoint
 * with a backlog held all 32 and every other library's deliveries waited behind it (a probe's
 * record.created arrived 32.6 s late). With 4 such an endpoint holds an eighth of the pool and the
 * rest serves the others, while a fast endpoint still gets 4 per answer time (80/s at 50 ms).
 * Per worker: N replicas may send one endpoint 4N at once.
 */
export const PER_ENDPOINT = 4
/**
 * A look that skips full endpoints passes their due messages over one by one in the store's
 * index (WebhookStore.due): 100k due messages of a hanging endpoint ahead of the wanted ones cost
 * it 7 ms on SQLite (11 ms from a file), each time an attempt ends. So after such a look the next
 * waits this many times as long as it took, at most SKIPPING_WAIT_MAX_MS: skipping looks take a
 * twentieth of the time however long the backlog, and a short backlog (two busy endpoints whose
 * messages interleave: well under a millisecond) delays nothing noticeably. Meanwhile an endpoint
 * whose attempt ended, or that was just given new messages, takes its own due ones
 * (WebhookStore.dueOf, cheap whatever the backlog): only retries coming due, and messages stored
 * by another replica, wait for the next skipping look.
 */
export const SKIPPING_COST_RATIO = 20
export const SKIPPING_WAIT_MAX_MS = 1_000

/** The pool of attempts in flight, counted per endpoint, and when a look may next skip full endpoints. */
export function createSlots(monotonic: () => number = () => performance.now()) {
  const perEndpoint = new Map<string, number>()
  const marked = new Set<string>()
  let inFlight = 0
  let skippingAllowedAt = 0
  return {
    /** Attempts that may start now. */
    room: () => CONCURRENCY - inFlight,
    /** Attempts the endpoint may start now. */
    free: (endpointId: string) => Math.min(PER_ENDPOINT - (perEndpoint.get(endpointId) ?? 0), CONCURRENCY - inFlight),
    /** Whether the endpoint has PER_ENDPOINT attempts in flight. */
    full: (endpointId: string) => (perEndpoint.get(endpointId) ?? 0) >= PER_ENDPOINT,
    /** The endpoints a look for due messages skips. */
    fullEndpoints: () => [...perEndpoint].flatMap(([id, n]) => (n >= PER_ENDPOINT ? [id] : [])),
    take(endpointId: string) {
      inFlight++
      perEndpoint.set(endpointId, (perEndpoint.get(endpointId) ?? 0) + 1)
    },
    give(endpointId: string) {
      inFlight--
      marked.add(endpointId)
      const left = (perEndpoint.get(endpointId) ?? 1) - 1
      if (left > 0) perEndpoint.set(endpointId, left)
      else perEndpoint.delete(endpointId)
    },
    /** Notes endpoints that were given new messages. */
    mark(endpointIds: Iterable<string>) {
      for (const id of endpointIds) marked.add(id)
    },
    /** The endpoints whose attempts ended or that were marked since this was last asked. */
    marked(): string[] {
      const endpoints = [...marked]
      marked.clear()
      return endpoints
    },
    /** Milliseconds until a skipping look may run; 0 now. */
    skippingWait: () => Math.max(0, skippingAllowedAt - monotonic()),
    /** Runs a skipping look, and sets when the next may run from what this one cost. */
    async skipping<T>(look: () => Promise<T>): Promise<T> {
      const started = monotonic()
      try {
        return await look()
      } finally {
        const ended = monotonic()
        skippingAllowedAt = ended + Math.min(SKIPPING_WAIT_MAX_MS, SKIPPING_COST_RATIO * (ended - started))
      }
    },
  }
}
