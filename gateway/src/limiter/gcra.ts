import type { LimitDecision, LimitPolicy } from './port'

/**
 * The algorithm both adapters share (the Redis Lua script mirrors `step` line by line).
 * Rate: GCRA, a token bucket that stores one number, the theoretical arrival time (TAT).
 * Times are whole microseconds so the arithmetic is exact: exactly `burst` requests fit at once.
 * Daily: a counter tagged with its UTC day number; another day means a fresh counter.
 */

export const DAY_US = 86_400_000_000

/** What one key stores. */
export interface BucketState {
  /** Theoretical arrival time, epoch µs: the bucket is full again at this instant. */
  tatUs: number
  /** UTC day number (epoch days) that `count` belongs to. */
  day: number
  /** Requests admitted on `day`. */
  count: number
}

/** Microseconds between two tokens. */
export const intervalUs = (policy: LimitPolicy) => Math.max(1, Math.round(1_000_000 / policy.perSecond))

export const dayOf = (nowUs: number) => Math.floor(nowUs / DAY_US)

export interface StepResult {
  limitedBy?: 'rate' | 'daily'
  /** The state after this request; when refused, the stored state seen at this instant (nothing to write). */
  state: BucketState
}

/** Decides one request. A refusal changes nothing, so it consumes nothing from either limit. */
export function step(stored: BucketState | undefined, nowUs: number, policy: LimitPolicy): StepResult {
  const interval = intervalUs(policy)
  const today = dayOf(nowUs)
  const tat = Math.max(stored?.tatUs ?? nowUs, nowUs)
  const count = stored && stored.day === today ? stored.count : 0
  const current = { tatUs: tat, day: today, count }
  if (count >= policy.daily) return { limitedBy: 'daily', state: current }
  const newTat = tat + interval
  if (newTat - policy.burst * interval > nowUs) return { limitedBy: 'rate', state: current }
  return { state: { tatUs: newTat, day: today, count: count + 1 } }
}

const ceilS = (us: number) => Math.ceil(us / 1_000_000)

/** What a decision is built from: the refusal, if any, and the TAT and count after the request. */
export interface Outcome {
  limitedBy?: 'rate' | 'daily'
  tatUs: number
  count: number
}

/** Turns the outcome of a request into the decision the gateway reports. */
export function toDecision(result: Outcome, nowUs: number, policy: LimitPolicy): LimitDecision {
  const interval = intervalUs(policy)
  const { tatUs, count } = result
  const resetAt = (dayOf(nowUs) + 1) * 86_400
  const dailyResetAfterS = ceilS(resetAt * 1_000_000 - nowUs)
  const tokens = Math.floor((nowUs - tatUs + policy.burst * interval) / interval)
  const nextTokenUs = tatUs + interval - policy.burst * interval - nowUs
  const retryAfterS =
    result.limitedBy === 'daily' ? dailyResetAfterS : result.limitedBy === 'rate' ? Math.max(1, ceilS(nextTokenUs)) : 0
  return {
    allowed: !result.limitedBy,
    ...(result.limitedBy ? { limitedBy: result.limitedBy } : {}),
    daily: { limit: policy.daily, remaining: Math.max(0, policy.daily - count), resetAt, resetAfterS: dailyResetAfterS },
    burst: { limit: policy.burst, remaining: Math.min(policy.burst, Math.max(0, tokens)), resetAfterS: ceilS(Math.max(0, tatUs - nowUs)) },
    retryAfterS: Math.max(retryAfterS, result.limitedBy ? 1 : 0),
  }
}
