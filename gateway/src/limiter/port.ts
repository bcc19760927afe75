/**
 * The rate limiter port (docs/decisions.md §8). Adapters: createMemoryLimiter (one process),
 * createRedisLimiter (shared by every gateway), createFailoverLimiter (Redis, memory when Redis is down).
 */

/** The limits of one key type: a daily quota plus a per-second rate with a burst allowance. */
export interface LimitPolicy {
  /** Requests per UTC day; the quota resets at 00:00 UTC. */
  daily: number
  /** Sustained requests per second (the token refill rate). */
  perSecond: number
  /** Requests that may arrive at once (the bucket's capacity). */
  burst: number
}

/** The outcome of one `consume`, with everything the response headers need. */
export interface LimitDecision {
  allowed: boolean
  /** Which limit refused: 'rate' (per-second burst) or 'daily'; undefined when allowed. */
  limitedBy?: 'rate' | 'daily'
  daily: {
    limit: number
    /** Requests left today, after this one when it was allowed. */
    remaining: number
    /** Epoch seconds of the next 00:00 UTC. */
    resetAt: number
    /** Whole seconds until resetAt, as seen by the limiter's clock. */
    resetAfterS: number
  }
  burst: {
    limit: number
    /** Requests that may be sent right now, after this one when it was allowed. */
    remaining: number
    /** Whole seconds (rounded up) until the bucket is full again; 0 when it is full. */
    resetAfterS: number
  }
  /** Whole seconds (≥ 1) to wait before a retry can succeed when refused; 0 when allowed. */
  retryAfterS: number
}

export interface RateLimiter {
  /**
   * Admits or refuses one request of `key` (a stable id such as the API key's id, never the
   * secret). An allowed request takes one from both limits; a refused one takes nothing.
   * Rejects only when the backing store is unreachable.
   */
  consume(key: string, policy: LimitPolicy): Promise<LimitDecision>
  /** True while the backing store answers (always true in memory). Never rejects. */
  ping(): Promise<boolean>
  /** Releases timers and connections. */
  close(): Promise<void>
}
