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
 * Attempts in flight to one library's endpoints at once, per worker: half the pool. Capped per
 * endpoint only, a library with eight endpoints that never answer (it may have ten) held all 32,
 * and another library's record.created arrived 19 s late (a probe on bun start, WEBHOOK_TIMEOUT_MS
 * 10 s). A library with at most four busy endpoints is not slowed by it.
 */
export const PER_LIBRARY = 16
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

/**
 * The pool of attempts in flight, counted per endpoint and per library, and when a look may next
 * skip full endpoints. An endpoint's library is learnt from its messages (take, full), and
 * forgotten once the library has nothing in flight.
 */
export function createSlots(monotonic: () => number = () => performance.now()) {
  const perEndpoint = new Map<string, number>()
  const perLibrary = new Map<string, number>()
  const libraryOf = new Map<string, string>()
  const marked = new Set<string>()
  let inFlight = 0
  let skippingAllowedAt = 0
  const count = (map: Map<string, number>, key: string, by: number) => {
    const n = (map.get(key) ?? 0) + by
    if (n > 0) map.set(key, n)
    else map.delete(key)
  }
  const libraryRoom = (endpointId: string) => PER_LIBRARY - (perLibrary.get(libraryOf.get(endpointId) ?? '') ?? 0)
  return {
    /** Attempts that may start now. */
    room: () => CONCURRENCY - inFlight,
    /** Attempts the endpoint may start now. */
    free: (endpointId: string) => Math.min(PER_ENDPOINT - (perEndpoint.get(endpointId) ?? 0), CONCURRENCY - inFlight, libraryRoom(endpointId)),
    /** Whether the endpoint has PER_ENDPOINT attempts in flight, or its library PER_LIBRARY. */
    full(endpointId: string, library: string): boolean {
      // Kept only while the library has attempts in flight (give forgets it with the last).
      if (perLibrary.has(library)) libraryOf.set(endpointId, library)
      return (perEndpoint.get(endpointId) ?? 0) >= PER_ENDPOINT || libraryRoom(endpointId) <= 0
    },
    /** Whether the library has PER_LIBRARY attempts in flight. */
    libraryFull: (library: string) => (perLibrary.get(library) ?? 0) >= PER_LIBRARY,
    /** Notes a library's endpoints, so that a look skips all of them while the library is full. */
    note(library: string, endpointIds: readonly string[]) {
      if (perLibrary.has(library)) for (const id of endpointIds) libraryOf.set(id, library)
    },
    /** The endpoints a look for due messages skips: the full ones, and those known of a full library. */
    fullEndpoints: () => [...new Set([
      ...[...perEndpoint].flatMap(([id, n]) => (n >= PER_ENDPOINT ? [id] : [])),
      ...[...libraryOf.keys()].filter((id) => libraryRoom(id) <= 0),
    ])],
    take(endpointId: string, library: string) {
      inFlight++
      libraryOf.set(endpointId, library)
      count(perEndpoint, endpointId, 1)
      count(perLibrary, library, 1)
    },
    give(endpointId: string) {
      inFlight--
      marked.add(endpointId)
      count(perEndpoint, endpointId, -1)
      const library = libraryOf.get(endpointId) ?? ''
      count(perLibrary, library, -1)
      if (!perLibrary.has(library)) for (const [id, of] of libraryOf) if (of === library) libraryOf.delete(id)
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
