import type { LimitDecision, LimitPolicy } from './port'

/**
 * The headers of every authenticated response (docs/decisions.md §8):
 * - `X-RateLimit-Limit` / `-Remaining` / `-Reset`: the daily quota; Reset is the epoch second of
 *   the next 00:00 UTC (the de-facto convention, as GitHub and Dub use it).
 * - `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers, structured-field
 *   lists): `"burst"` is the token bucket as a quota per window (burstPolicy); `"daily"` is the
 *   quota, w = 86400. `r` is what is left; `t` is seconds until the quota is whole again (burst:
 *   the bucket is full; daily: the next 00:00 UTC).
 * - `Retry-After`, whole seconds ≥ 1, only when refused.
 */
export function rateLimitHeaders(decision: LimitDecision, policy: LimitPolicy): Record<string, string> {
  const { daily, burst } = decision
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(policy.daily),
    'X-RateLimit-Remaining': String(daily.remaining),
    'X-RateLimit-Reset': String(daily.resetAt),
    'RateLimit-Policy': `${burstPolicy(policy)}, "daily";q=${policy.daily};w=86400`,
    RateLimit: `"burst";r=${burst.remaining};t=${burst.resetAfterS}, "daily";r=${daily.remaining};t=${daily.resetAfterS}`,
  }
  if (!decision.allowed) headers['Retry-After'] = String(Math.max(1, decision.retryAfterS))
  return headers
}

/**
 * The token bucket as the draft's "q requests per w seconds", which a client paces itself by: w is
 * the time the bucket takes to fill (whole seconds, at least 1), q what may be sent in it, never
 * more than the bucket holds. 5/s with a burst of 10 is `q=10;w=2`: ten at once, five a second
 * on average. (`q=10;w=1` had promised ten a second, twice the rate: a client keeping to it was
 * refused every other second.)
 */
export function burstPolicy(policy: LimitPolicy): string {
  const window = Math.max(1, Math.ceil(policy.burst / policy.perSecond))
  return `"burst";q=${Math.min(policy.burst, Math.floor(policy.perSecond * window))};w=${window}`
}

/** The 429 message: which limit was hit and when to come back; '' when allowed. */
export function limitMessage(decision: LimitDecision, policy: LimitPolicy): string {
  if (decision.limitedBy === 'daily') return `daily quota of ${policy.daily} requests exceeded; resets at 00:00 UTC`
  if (decision.limitedBy === 'rate')
    return `rate limit exceeded: at most ${policy.perSecond} requests per second (burst ${policy.burst}); retry after ${decision.retryAfterS} s`
  return ''
}
