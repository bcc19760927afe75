import { describe, expect, it } from 'bun:test'
import { createMemoryLimiter, type LimitDecision, type LimitPolicy, limitMessage, rateLimitHeaders } from '../../src/limiter'

const POLICY: LimitPolicy = { daily: 2000, perSecond: 5, burst: 10 }

function decision(overrides: Partial<LimitDecision> = {}): LimitDecision {
  return {
    allowed: true,
    daily: { limit: 2000, remaining: 1500, resetAt: 1_736_985_600, resetAfterS: 3_600 },
    burst: { limit: 10, remaining: 4, resetAfterS: 2 },
    retryAfterS: 0,
    ...overrides,
  }
}

describe('rate limit headers', () => {
  it('omits Retry-After when the request is allowed', () => {
    expect(rateLimitHeaders(decision(), POLICY)).not.toHaveProperty('Retry-After')
  })

  it('never sends a Retry-After below 1 second on a refusal', () => {
    const refused = decision({ allowed: false, limitedBy: 'rate', retryAfterS: 0 })
    expect(rateLimitHeaders(refused, POLICY)['Retry-After']).toBe('1')
  })

  it('describes both policies in the IETF structured-field form', () => {
    const headers = rateLimitHeaders(decision(), POLICY)
    expect(headers['RateLimit-Policy']).toBe('"burst";q=10;w=2, "daily";q=2000;w=86400')
    expect(headers.RateLimit).toBe('"burst";r=4;t=2, "daily";r=1500;t=3600')
  })

  // The spec's two key types, the API suite's small limits, and rates that do not divide the burst.
  for (const [perSecond, burst, policy] of [[5, 10, 'q=10;w=2'], [10, 20, 'q=20;w=2'], [1, 3, 'q=3;w=3'], [100, 50, 'q=50;w=1'], [3, 10, 'q=10;w=4'], [2, 1, 'q=1;w=1']] as const) {
    it(`states ${perSecond}/s with a burst of ${burst} as "burst";${policy}, and a client sending q at once every w seconds is never refused`, async () => {
      const limits: LimitPolicy = { daily: 1_000_000, perSecond, burst }
      const clock = { ms: Date.UTC(2025, 0, 15, 12) }
      const limiter = createMemoryLimiter({ now: () => clock.ms })
      const stated = rateLimitHeaders(decision(), limits)['RateLimit-Policy']!
      expect(stated).toBe(`"burst";${policy}, "daily";q=1000000;w=86400`)
      const [, q, w] = stated.match(/^"burst";q=(\d+);w=(\d+)/)!.map(Number)
      const refused = []
      for (let window = 0; window < 10; window++, clock.ms += w! * 1000) {
        for (let i = 0; i < q!; i++) if (!(await limiter.consume('client', limits)).allowed) refused.push([window, i])
      }
      expect(refused).toEqual([])
    })
  }
})

describe('limit message', () => {
  it('names the per-second rate, the burst and the wait when the rate refused', () => {
    const refused = decision({ allowed: false, limitedBy: 'rate', retryAfterS: 1 })
    expect(limitMessage(refused, POLICY)).toBe('rate limit exceeded: at most 5 requests per second (burst 10); retry after 1 s')
  })

  it('names the daily quota and its reset when the quota refused', () => {
    const refused = decision({ allowed: false, limitedBy: 'daily', retryAfterS: 3_600 })
    expect(limitMessage(refused, POLICY)).toBe('daily quota of 2000 requests exceeded; resets at 00:00 UTC')
  })

  it('is empty when the request is allowed', () => {
    expect(limitMessage(decision(), POLICY)).toBe('')
  })
})
