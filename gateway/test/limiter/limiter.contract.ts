import { describe, expect, it } from 'bun:test'
import { type LimitPolicy, type RateLimiter, rateLimitHeaders } from '../../src/limiter'

/** Builds the adapter under test on an injected clock (epoch ms). */
export type MakeLimiter = (now: () => number) => RateLimiter

/** 2025-01-15T12:00:00Z: noon, so the day has 43 200 s left. */
export const NOON = Date.UTC(2025, 0, 15, 12)
const NEXT_MIDNIGHT_S = Date.UTC(2025, 0, 16) / 1000
const SPEC_PERSONAL: LimitPolicy = { daily: 2000, perSecond: 5, burst: 10 }
const SMALL_DAILY: LimitPolicy = { daily: 3, perSecond: 1, burst: 10 }

function setup(make: MakeLimiter, startMs = NOON) {
  const clock = { ms: startMs }
  const limiter = make(() => clock.ms)
  const key = `key-${crypto.randomUUID()}`
  const times = async (n: number, policy: LimitPolicy, k = key) => {
    const decisions = []
    for (let i = 0; i < n; i++) decisions.push(await limiter.consume(k, policy))
    return decisions
  }
  return { clock, limiter, key, times }
}

/** The behaviour every RateLimiter adapter must show (port.ts). */
export function limiterContract(make: MakeLimiter) {
  describe('burst', () => {
    it('admits exactly burst requests at once and refuses the next one as rate limited', async () => {
      const { times } = setup(make)
      const decisions = await times(11, SPEC_PERSONAL)
      expect(decisions.slice(0, 10).every((d) => d.allowed)).toBe(true)
      expect(decisions[10]).toMatchObject({ allowed: false, limitedBy: 'rate', retryAfterS: 1 })
    })

    it('counts the burst remaining down from burst - 1 to 0', async () => {
      const { times } = setup(make)
      const decisions = await times(10, SPEC_PERSONAL)
      expect(decisions.map((d) => d.burst.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
    })

    it('refills one token after 1/perSecond seconds and not before', async () => {
      const { clock, limiter, key, times } = setup(make)
      await times(10, SPEC_PERSONAL)
      clock.ms += 199
      expect((await limiter.consume(key, SPEC_PERSONAL)).allowed).toBe(false)
      clock.ms += 1
      expect((await limiter.consume(key, SPEC_PERSONAL)).allowed).toBe(true)
      expect((await limiter.consume(key, SPEC_PERSONAL)).limitedBy).toBe('rate')
    })

    it('refills the whole burst after burst/perSecond seconds', async () => {
      const { clock, times } = setup(make)
      await times(10, SPEC_PERSONAL)
      clock.ms += 2_000
      const decisions = await times(11, SPEC_PERSONAL)
      expect(decisions.filter((d) => d.allowed)).toHaveLength(10)
    })

    it('does not take from the daily quota when a request is refused by the rate', async () => {
      const { clock, limiter, key, times } = setup(make)
      await times(10, SPEC_PERSONAL)
      const refused = await times(5, SPEC_PERSONAL)
      expect(refused.map((d) => d.daily.remaining)).toEqual([1990, 1990, 1990, 1990, 1990])
      clock.ms += 200
      expect((await limiter.consume(key, SPEC_PERSONAL)).daily.remaining).toBe(1989)
    })

    it('does not take a token when a request is refused by the rate', async () => {
      const { clock, limiter, key, times } = setup(make)
      await times(10, SPEC_PERSONAL)
      clock.ms += 100
      await times(5, SPEC_PERSONAL)
      clock.ms += 100
      expect((await limiter.consume(key, SPEC_PERSONAL)).allowed).toBe(true)
    })
  })

  describe('daily quota', () => {
    it('refuses as daily once the quota is spent', async () => {
      const { times } = setup(make)
      const decisions = await times(4, SMALL_DAILY)
      expect(decisions.map((d) => d.daily.remaining)).toEqual([2, 1, 0, 0])
      expect(decisions[3]).toMatchObject({ allowed: false, limitedBy: 'daily', retryAfterS: 43_200 })
    })

    it('reports the reset as the epoch second of the next 00:00 UTC', async () => {
      const { limiter, key } = setup(make)
      const decision = await limiter.consume(key, SMALL_DAILY)
      expect(decision.daily).toEqual({ limit: 3, remaining: 2, resetAt: NEXT_MIDNIGHT_S, resetAfterS: 43_200 })
    })

    it('resets the quota at 00:00 UTC and not a millisecond before', async () => {
      const { clock, limiter, key, times } = setup(make, NEXT_MIDNIGHT_S * 1000 - 1_500)
      await times(3, SMALL_DAILY)
      clock.ms += 1_499
      expect(await limiter.consume(key, SMALL_DAILY)).toMatchObject({ allowed: false, limitedBy: 'daily', retryAfterS: 1 })
      clock.ms += 1
      const decision = await limiter.consume(key, SMALL_DAILY)
      expect(decision).toMatchObject({ allowed: true, retryAfterS: 0 })
      expect(decision.daily).toEqual({ limit: 3, remaining: 2, resetAt: NEXT_MIDNIGHT_S + 86_400, resetAfterS: 86_400 })
    })

    it('does not take a token when a request is refused by the daily quota', async () => {
      const { times } = setup(make)
      await times(3, SMALL_DAILY)
      const refused = await times(5, SMALL_DAILY)
      expect(refused.map((d) => d.burst.remaining)).toEqual([7, 7, 7, 7, 7])
    })
  })

  describe('keys', () => {
    it('keeps the budgets of separate keys independent', async () => {
      const { limiter, times } = setup(make)
      await times(11, SPEC_PERSONAL)
      const other = await limiter.consume(`other-${crypto.randomUUID()}`, SPEC_PERSONAL)
      expect(other).toMatchObject({ allowed: true, burst: { limit: 10, remaining: 9, resetAfterS: 1 } })
      expect(other.daily.remaining).toBe(1999)
    })
  })

  describe('headers', () => {
    it('gives exact headers for an allowed request', async () => {
      const { limiter, key } = setup(make)
      const decision = await limiter.consume(key, SPEC_PERSONAL)
      expect(rateLimitHeaders(decision, SPEC_PERSONAL)).toEqual({
        'X-RateLimit-Limit': '2000',
        'X-RateLimit-Remaining': '1999',
        'X-RateLimit-Reset': String(NEXT_MIDNIGHT_S),
        'RateLimit-Policy': '"burst";q=10;w=2, "daily";q=2000;w=86400',
        RateLimit: '"burst";r=9;t=1, "daily";r=1999;t=43200',
      })
    })

    it('gives exact headers with Retry-After for a request refused by the rate', async () => {
      const { times } = setup(make)
      const refused = (await times(11, SPEC_PERSONAL))[10]!
      expect(rateLimitHeaders(refused, SPEC_PERSONAL)).toEqual({
        'X-RateLimit-Limit': '2000',
        'X-RateLimit-Remaining': '1990',
        'X-RateLimit-Reset': String(NEXT_MIDNIGHT_S),
        'RateLimit-Policy': '"burst";q=10;w=2, "daily";q=2000;w=86400',
        RateLimit: '"burst";r=0;t=2, "daily";r=1990;t=43200',
        'Retry-After': '1',
      })
    })

    it('gives Retry-After until midnight for a request refused by the daily quota', async () => {
      const { times } = setup(make)
      const refused = (await times(4, SMALL_DAILY))[3]!
      expect(rateLimitHeaders(refused, SMALL_DAILY)).toMatchObject({
        'X-RateLimit-Remaining': '0',
        RateLimit: '"burst";r=7;t=3, "daily";r=0;t=43200',
        'Retry-After': '43200',
      })
    })
  })
}
