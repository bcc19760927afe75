import { beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { account, businessKey, freshMember, type Member, personalKey } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

/** Settings of the stack this suite runs on: small limits so they are reached quickly. */
export const LIMITS_ENV = {
  LIMIT_PERSONAL_DAILY: '1000', LIMIT_PERSONAL_PER_SECOND: '1', LIMIT_PERSONAL_BURST: '3',
  LIMIT_BUSINESS_DAILY: '4', LIMIT_BUSINESS_PER_SECOND: '100', LIMIT_BUSINESS_BURST: '50',
}

const nextMidnight = () => Math.floor(Date.now() / 86_400_000 + 1) * 86_400

/** Rate limits and daily quotas through the API (docs/decisions.md §8). */
export function limitsSuite(stack: () => Stack) {
  describe('rate limits and quotas', () => {
    const list = (key?: string) => call(stack(), 'GET', '/v1/qrcodes', { key })

    it('puts the quota and both policies on every authenticated response', async () => {
      const { key } = await freshMember(stack())
      const res = await list(key)
      expect(res.status).toBe(200)
      expect(res.headers.get('x-ratelimit-limit')).toBe('1000')
      expect(res.headers.get('x-ratelimit-remaining')).toBe('999')
      expect(Number(res.headers.get('x-ratelimit-reset'))).toBe(nextMidnight())
      expect(res.headers.get('ratelimit-policy')).toBe('"burst";q=3;w=3, "daily";q=1000;w=86400')
      expect(res.headers.get('ratelimit')).toMatch(/^"burst";r=2;t=1, "daily";r=999;t=\d+$/)
      expect(res.headers.get('retry-after')).toBeNull()
    })

    it('counts error responses too: a 404 takes from the quota', async () => {
      const { key } = await freshMember(stack())
      expect((await call(stack(), 'GET', '/v1/qrcodes/qr_missing', { key })).headers.get('x-ratelimit-remaining')).toBe('999')
      expect((await list(key)).headers.get('x-ratelimit-remaining')).toBe('998')
    })

    it('refuses the request after the burst with 429, Retry-After and a message naming the rate limit', async () => {
      const { key } = await freshMember(stack())
      const statuses = []
      for (let i = 0; i < 4; i++) statuses.push(await list(key))
      expect(statuses.map((r) => r.status)).toEqual([200, 200, 200, 429])
      const refused = statuses[3]!
      expect(refused.body).toEqual({ error: expect.stringContaining('rate limit') })
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('997')
    })

    // docs/decisions.md §8: key (403), then rate limit (429), then route and body.
    it('refuses past the burst with 429 before it looks at the route or the body: an unknown route, a bad query, method or body', async () => {
      const { key } = await freshMember(stack())
      for (let i = 0; i < 3; i++) expect((await list(key)).status).toBe(200)
      const json = { 'content-type': 'application/json' }
      // At once, so that no token comes back (one a second) while they are answered.
      const answers = await Promise.all([
        call(stack(), 'GET', '/v1/nothing', { key }),
        call(stack(), 'GET', '/v1/qrcodes?limit=0', { key }),
        call(stack(), 'PUT', '/v1/qrcodes', { key }),
        call(stack(), 'GET', '/v1/dynqrcodes/Nope1234', { key }),
        call(stack(), 'POST', '/v1/qrcodes', { key, raw: '{"url": ', headers: json }),
        call(stack(), 'POST', '/v1/qrcodes', { key, raw: '{}', headers: { 'content-type': 'text/plain' } }),
        call(stack(), 'POST', '/v1/qrcodes/batch', { key, raw: JSON.stringify({ qrcodes: [{ url: 'https://example.com/', name: 'x'.repeat(1024 * 1024) }] }), headers: json }),
      ])
      expect(answers.map((res) => [res.status, res.body.error])).toEqual(answers.map(() => [429, expect.stringContaining('rate limit')]))
    })

    it('counts a batch as one request, however many records it creates', async () => {
      const { key } = await freshMember(stack())
      const statics = await call(stack(), 'POST', '/v1/qrcodes/batch', { key, body: { qrcodes: Array.from({ length: 50 }, (_, i) => ({ url: `https://example.com/${i}`, name: `S${i}` })) } })
      expect([statics.status, statics.body.created?.length, statics.headers.get('x-ratelimit-remaining')]).toEqual([201, 50, '999'])
      const dynamics = await call(stack(), 'POST', '/v1/dynqrcodes/batch', { key, body: Array.from({ length: 50 }, (_, i) => ({ destination_url: `https://example.com/${i}`, name: `D${i}` })) })
      expect([dynamics.status, dynamics.body.created?.length, dynamics.headers.get('x-ratelimit-remaining')]).toEqual([201, 50, '998'])
    })

    it('lets a refused request consume nothing', async () => {
      const { key } = await freshMember(stack())
      for (let i = 0; i < 3; i++) await list(key)
      for (let i = 0; i < 3; i++) expect((await list(key)).status).toBe(429)
      await Bun.sleep(1100)
      const res = await list(key)
      expect(res.status).toBe(200)
      expect(res.headers.get('x-ratelimit-remaining')).toBe('996')
    })

    it('refuses past the daily quota with 429 and a message naming the quota', async () => {
      const { account_id } = await account(stack(), 'quota', 'business')
      const team = await stack().admin('team', 'create', '--name', 'Quota', '--admin', account_id)
      const { key } = await businessKey(stack(), account_id, team.team_id)
      const statuses = []
      for (let i = 0; i < 5; i++) statuses.push(await list(key))
      expect(statuses.map((r) => r.status)).toEqual([200, 200, 200, 200, 429])
      // A business key's own limits (LIMITS_ENV): 100/s with a burst of 50, 4 a day.
      expect([statuses[0]!.headers.get('x-ratelimit-limit'), statuses[0]!.headers.get('ratelimit-policy')]).toEqual(['4', '"burst";q=50;w=1, "daily";q=4;w=86400'])
      expect(statuses[4]!.body.error).toContain('daily quota')
      expect(statuses[4]!.headers.get('x-ratelimit-remaining')).toBe('0')
      const retryAfter = Number(statuses[4]!.headers.get('retry-after'))
      expect(Math.abs(retryAfter - (nextMidnight() - Date.now() / 1000))).toBeLessThan(5)
    })

    it('keeps each key\'s budget separate', async () => {
      const [a, b] = await Promise.all([freshMember(stack()), freshMember(stack())])
      for (let i = 0; i < 3; i++) await list(a.key)
      expect((await list(a.key)).status).toBe(429)
      expect((await list(b.key)).status).toBe(200)
    })

    it('keeps an account\'s budget across a new key: revoking and regenerating starts no fresh quota or burst', async () => {
      const { account_id } = await account(stack(), 'rotate', 'business')
      const team = await stack().admin('team', 'create', '--name', 'Rotate', '--admin', account_id)
      const first = await businessKey(stack(), account_id, team.team_id)
      for (let i = 0; i < 4; i++) expect((await list(first.key)).status).toBe(200)
      await stack().admin('key', 'revoke', '--key-id', first.key_id)
      const second = await businessKey(stack(), account_id, team.team_id)
      const res = await list(second.key)
      expect(res.status).toBe(429)
      expect(res.body.error).toContain('daily quota')
      // The same account's personal library is another budget; so is a teammate's in the team library.
      const personal = await personalKey(stack(), account_id)
      expect((await list(personal.key)).status).toBe(200)
      const { account_id: mate } = await account(stack(), 'rotate-mate', 'pro')
      await stack().admin('team', 'add-member', '--team', team.team_id, '--account', mate, '--role', 'writer')
      expect((await list((await businessKey(stack(), mate, team.team_id)).key)).status).toBe(200)
    })

    it('answers a bad key with 403 before any limit, without limit headers', async () => {
      const res = await list('lrp_00000000000000000000000000000000')
      expect(res.status).toBe(403)
      expect(res.headers.get('x-ratelimit-limit')).toBeNull()
    })
  })
}

/** One budget shared by several gateways through Redis, and Redis going away and coming back. */
export function sharedLimitsSuite(stack: () => Stack, opts: {
  secondGateway: () => Promise<{ request(path: string, init?: RequestInit): Promise<Response>; stop(): Promise<void> }>
  redis: () => { stop(): Promise<void>; restart(): Promise<void> }
}) {
  describe('limits shared through Redis', () => {
    let member: Member
    beforeAll(async () => {
      member = await freshMember(stack())
    }, 60_000)

    it('lets exactly the burst through when two gateways are flooded at once', async () => {
      const other = await opts.secondGateway()
      try {
        const { key } = await freshMember(stack())
        const init = { headers: { 'x-api-key': key } }
        const flood = Array.from({ length: 20 }, (_, i) => (i % 2 ? other.request('/v1/qrcodes', init) : stack().request('/v1/qrcodes', init)))
        const statuses = (await Promise.all(flood)).map((r) => r.status)
        expect(statuses.filter((s) => s === 200)).toHaveLength(3)
        expect(statuses.filter((s) => s === 429)).toHaveLength(17)
      } finally {
        await other.stop()
      }
    })

    it('keeps serving on per-gateway limits while Redis is down, and stays ready saying so', async () => {
      await opts.redis().stop()
      try {
        const started = performance.now()
        const res = await call(stack(), 'GET', '/v1/qrcodes', { key: member.key })
        expect(res.status).toBe(200)
        expect(performance.now() - started).toBeLessThan(1000)
        // Redis is optional (docs/decisions.md §8): reported, never a 503 that would empty the Service.
        const ready = await call(stack(), 'GET', '/readyz')
        expect([ready.status, ready.body.degraded]).toEqual([200, ['redis']])
      } finally {
        await opts.redis().restart()
      }
    })

    it('takes the shared budget back by itself within seconds of Redis returning, with no API traffic', async () => {
      await opts.redis().stop()
      try {
        await call(stack(), 'GET', '/v1/qrcodes', { key: member.key }) // the limiter finds Redis gone
      } finally {
        await opts.redis().restart()
      }
      // From here on only /readyz is asked: nothing that goes through the limiter.
      const deadline = Date.now() + 5_000
      let ready = await call(stack(), 'GET', '/readyz')
      while (ready.body.degraded?.length !== 0 && Date.now() < deadline) {
        await Bun.sleep(100)
        ready = await call(stack(), 'GET', '/readyz')
      }
      expect([ready.status, ready.body.degraded]).toEqual([200, []])
    }, 20_000)
  })
}
