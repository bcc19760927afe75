import { type BucketState, dayOf, step, toDecision } from './gcra'
import type { RateLimiter } from './port'

export interface MemoryLimiterOptions {
  /** Clock in epoch ms; tests inject one to move time. */
  now?: () => number
  /** Keys kept before the oldest are dropped even if still in use (memory bound). */
  maxKeys?: number
  /** Consumes between two sweeps of stale buckets. */
  sweepEvery?: number
}

/** The in-process limiter: one budget per process. Buckets are swept once stale. */
export interface MemoryLimiter extends RateLimiter {
  /** Keys currently held (for tests and metrics). */
  size(): number
}

export function createMemoryLimiter(options: MemoryLimiterOptions = {}): MemoryLimiter {
  const now = options.now ?? Date.now
  const maxKeys = options.maxKeys ?? 100_000
  const sweepEvery = options.sweepEvery ?? 1_000
  const buckets = new Map<string, BucketState>()
  let sinceSweep = 0

  /** Stale: full again and counting an earlier day, so forgetting it changes no decision. */
  function sweep(nowUs: number) {
    const today = dayOf(nowUs)
    for (const [key, state] of buckets) if (state.tatUs <= nowUs && state.day < today) buckets.delete(key)
  }

  return {
    async consume(key, policy) {
      const nowUs = Math.floor(now() * 1000)
      if (++sinceSweep >= sweepEvery) {
        sinceSweep = 0
        sweep(nowUs)
      }
      const stored = buckets.get(key)
      const result = step(stored, nowUs, policy)
      if (!result.limitedBy) {
        buckets.delete(key)
        buckets.set(key, result.state)
        // Over the bound: forget the least recently admitted key (a Map iterates in insertion order).
        if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value as string)
      }
      return toDecision({ limitedBy: result.limitedBy, ...result.state }, nowUs, policy)
    },
    ping: async () => true,
    async close() {
      buckets.clear()
    },
    size: () => buckets.size,
  }
}
