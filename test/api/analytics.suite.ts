import { beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember, type Member } from '../harness/fixtures'
import { waitUntil } from '../harness/ports'
import type { Stack } from '../harness/stack'

/** Real user agents, as sent by the clients the product meets. */
export const AGENTS = {
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  ipad: 'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
  windows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  slack: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
}

/** The stack of this suite runs with TRUST_PROXY=1: visitors by X-Forwarded-For, country by CF-IPCountry. */
export const ANALYTICS_ENV = { TRUST_PROXY: '1' }

const HEADER = 'scan_id,code,scanned_at,country,device,os,browser,visitor_id'
const ZERO = { total_scans: 0, unique_scans: 0, daily: [], countries: [], devices: [], os: [], browsers: [], fallback_scans: 0 }
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)
/** Closer than this to midnight UTC, the suite waits for the next day before its first scan. */
const MIDNIGHT_MARGIN_MS = 60_000

/** Scan analytics through the resolver and the API (docs/decisions.md §5, §6, §7). */
export function analyticsSuite(stack: () => Stack) {
  describe('scan analytics', () => {
    let own: Member
    let other: Member
    const codes: Record<'menu' | 'poster' | 'gone' | 'quiet', string> = { menu: '', poster: '', gone: '', quiet: '' }
    let today = ''
    let started = 0
    const api = (path: string, key = own.key) => call(stack(), 'GET', path, { key })
    const create = async (name: string) =>
      (await call(stack(), 'POST', '/v1/dynqrcodes', { key: own.key, body: { destination_url: 'https://example.com/menu', name } })).body.created[0].code as string
    const scan = (code: string, agent: string, ip: string, country: string) =>
      stack().short(`/${code}`, { headers: { 'user-agent': agent, 'x-forwarded-for': ip, 'cf-ipcountry': country } })
    const breakdown = async (code: string, query = '') => (await api(`/v1/dynqrcodes/${code}/analytics${query}`)).body
    /** Polls the breakdown until it counts `n` scans; a scan must show within 2 s (docs/decisions.md §5). */
    const counted = (code: string, n: number, ms = 2000) => waitUntil(async () => (await breakdown(code)).total_scans === n, ms, `${n} scans of ${code}`)

    beforeAll(async () => {
      ;[own, other] = await Promise.all([freshMember(stack()), freshMember(stack())])
      // Every scan of the suite on one UTC day: within a minute of midnight, the next day's first.
      const toMidnight = 86_400_000 - (Date.now() % 86_400_000)
      if (toMidnight < MIDNIGHT_MARGIN_MS) await Bun.sleep(toMidnight + 1000)
      for (const name of ['menu', 'poster', 'gone', 'quiet'] as const) codes[name] = await create(name)
      started = Date.now()
      today = dayOf(started)
      const scans: [keyof typeof codes, keyof typeof AGENTS, string, string][] = [
        ['menu', 'iphone', '203.0.113.1', 'de'],
        ['menu', 'ipad', '203.0.113.2', 'DE'],
        ['menu', 'android', '203.0.113.3', 'US'],
        ['menu', 'windows', '203.0.113.4', 'FR'],
        ['menu', 'googlebot', '203.0.113.5', 'US'],
        ['menu', 'slack', '203.0.113.6', 'US'],
        ['menu', 'iphone', '203.0.113.1', 'DE'],
        ['poster', 'windows', '203.0.113.4', 'XX'],
        ['gone', 'iphone', '203.0.113.1', 'DE'],
      ]
      for (const [code, agent, ip, country] of scans) {
        expect((await scan(codes[code], AGENTS[agent], ip, country)).status).toBe(302)
        // Each scan its own millisecond: the export is oldest first, and two scans of one
        // millisecond from two resolvers (the scaled-out stack) may arrive in either order.
        await Bun.sleep(2)
      }
      await counted(codes.menu, 5)
      await counted(codes.poster, 1)
      await counted(codes.gone, 1)
      expect((await call(stack(), 'DELETE', `/v1/dynqrcodes/${codes.gone}`, { key: own.key })).status).toBe(200)
      // The wait for midnight counts against the hook's time too (a CI run at 23:59 UTC timed out at 30 s).
    }, 30_000 + MIDNIGHT_MARGIN_MS + 1000)

    it('shows a scan in the breakdown within 2 seconds', async () => {
      const code = await create('fresh')
      expect((await scan(code, AGENTS.android, '198.51.100.9', 'BR')).status).toBe(302)
      const at = Date.now()
      await counted(code, 1)
      expect(Date.now() - at).toBeLessThan(2000)
    })

    it('answers every number of the breakdown of one code', async () => {
      const res = await api(`/v1/dynqrcodes/${codes.menu}/analytics`)
      expect([res.status, res.body]).toEqual([200, {
        code: codes.menu,
        total_scans: 5,
        unique_scans: 4,
        daily: [{ date: today, scans: 5, unique_scans: 4 }],
        countries: [{ country: 'DE', scans: 3 }, { country: 'FR', scans: 1 }, { country: 'US', scans: 1 }],
        devices: [{ device: 'mobile', scans: 3 }, { device: 'desktop', scans: 1 }, { device: 'tablet', scans: 1 }],
        os: [{ os: 'iOS', scans: 3 }, { os: 'Android', scans: 1 }, { os: 'Windows', scans: 1 }],
        browsers: [{ browser: 'Mobile Safari', scans: 3 }, { browser: 'Chrome', scans: 2 }],
        fallback_scans: 0,
      }])
    })

    it('redirects Googlebot and the Slack link preview but counts neither', async () => {
      const res = await api(`/v1/dynqrcodes/${codes.menu}/analytics`)
      expect(res.body.total_scans).toBe(5)
      expect(res.body.browsers.map((b: { browser: string }) => b.browser)).toEqual(['Mobile Safari', 'Chrome'])
    })

    it('answers the summary of every live code of the library, zeros included, without the deleted one', async () => {
      const res = await api('/v1/dynqrcodes/analytics')
      expect(res.status).toBe(200)
      expect(res.body.analytics.slice(0, 3)).toEqual([
        { code: codes.menu, total_scans: 5, unique_scans: 4 },
        { code: codes.poster, total_scans: 1, unique_scans: 1 },
        { code: codes.quiet, total_scans: 0, unique_scans: 0 },
      ])
      expect(res.body.analytics.map((a: { code: string }) => a.code)).not.toContain(codes.gone)
    })

    it('counts only the days of from and to', async () => {
      const tomorrow = dayOf(started + 86_400_000)
      expect(await breakdown(codes.menu, `?from=${today}&to=${today}`)).toEqual(await breakdown(codes.menu))
      expect(await breakdown(codes.menu, `?from=${tomorrow}`)).toEqual({ code: codes.menu, ...ZERO })
      const summary = (await api(`/v1/dynqrcodes/analytics?to=${dayOf(started - 86_400_000)}`)).body.analytics
      expect(summary.slice(0, 2)).toEqual([{ code: codes.menu, total_scans: 0, unique_scans: 0 }, { code: codes.poster, total_scans: 0, unique_scans: 0 }])
    })

    it('takes unknown for a CF-IPCountry of XX', async () => {
      expect((await breakdown(codes.poster)).countries).toEqual([{ country: 'unknown', scans: 1 }])
    })

    it('keeps the breakdown and the export of a soft-deleted code', async () => {
      expect(await breakdown(codes.gone)).toMatchObject({ code: codes.gone, total_scans: 1, unique_scans: 1, countries: [{ country: 'DE', scans: 1 }] })
      const res = await api(`/v1/dynqrcodes/${codes.gone}/analytics/export`)
      expect([res.status, res.text.split('\r\n').length]).toEqual([200, 3])
    })

    it('exports every counted scan as CSV with the contract columns', async () => {
      const res = await api(`/v1/dynqrcodes/${codes.menu}/analytics/export`)
      expect([res.status, res.headers.get('content-type'), res.headers.get('content-disposition')])
        .toEqual([200, 'text/csv; charset=utf-8', `attachment; filename="${codes.menu}-scans.csv"`])
      const [header, ...rows] = res.text.split('\r\n')
      expect([header, rows.pop()]).toEqual([HEADER, ''])
      const cells = rows.map((row) => row.split(','))
      expect(cells.map(([, code, , country, device, os, browser]) => [code, country, device, os, browser])).toEqual([
        [codes.menu, 'DE', 'mobile', 'iOS', 'Mobile Safari'],
        [codes.menu, 'DE', 'tablet', 'iOS', 'Mobile Safari'],
        [codes.menu, 'US', 'mobile', 'Android', 'Chrome'],
        [codes.menu, 'FR', 'desktop', 'Windows', 'Chrome'],
        [codes.menu, 'DE', 'mobile', 'iOS', 'Mobile Safari'],
      ])
      const seconds = cells.map((c) => Number(c[2]))
      expect(seconds.every((s) => s >= Math.floor(started / 1000) - 1 && s <= Date.now() / 1000)).toBe(true)
      expect(seconds).toEqual([...seconds].sort((a, b) => a - b))
      expect(new Set(cells.map((c) => c[0])).size).toBe(5)
      const visitors = cells.map((c) => c[7])
      expect([new Set(visitors).size, visitors[0] === visitors[4], visitors.every((v) => /^[0-9a-f]{64}$/.test(v!))]).toEqual([4, true, true])
      expect(res.text).not.toContain('203.0.113')
    })

    it('answers 404 to another library on the breakdown and the export, and leaves the code out of its summary', async () => {
      for (const path of [`/v1/dynqrcodes/${codes.menu}/analytics`, `/v1/dynqrcodes/${codes.menu}/analytics/export`]) {
        const res = await api(path, other.key)
        expect([res.status, res.body], path).toEqual([404, { error: `no dynamic QR code "${codes.menu}" in this library` }])
      }
      expect((await api('/v1/dynqrcodes/analytics', other.key)).body).toEqual({ analytics: [] })
    })

    it('answers 404 for a code never issued', async () => {
      const res = await api('/v1/dynqrcodes/Nope12345/analytics')
      expect([res.status, res.body]).toEqual([404, { error: 'no dynamic QR code "Nope12345" in this library' }])
    })

    it('answers 400 for a bad from or to on every analytics route', async () => {
      for (const path of ['/v1/dynqrcodes/analytics?from=2025-02-30', `/v1/dynqrcodes/${codes.menu}/analytics?to=yesterday`, `/v1/dynqrcodes/${codes.menu}/analytics/export?from=2025-1-1`]) {
        const res = await api(path)
        expect([res.status, res.body.error], path).toEqual([400, expect.stringMatching(/^(from|to) must be a date YYYY-MM-DD \(UTC\)$/)])
      }
      const res = await api(`/v1/dynqrcodes/${codes.menu}/analytics?from=2025-01-02&to=2025-01-01`)
      expect([res.status, res.body]).toEqual([400, { error: 'from must not be after to' }])
    })

    it('documents the three analytics routes in the OpenAPI document', async () => {
      const paths = Object.keys((await call(stack(), 'GET', '/docs/json')).body.paths)
      expect(paths).toEqual(expect.arrayContaining(['/v1/dynqrcodes/analytics', '/v1/dynqrcodes/{code}/analytics', '/v1/dynqrcodes/{code}/analytics/export']))
    })

    it('counts every scan made while the analytics service was stopped, exactly once, after it restarts', async () => {
      const s = stack()
      if (!s.stopProcess || !s.startProcess) return // one process: nothing to stop
      await s.stopProcess('analytics')
      for (let i = 0; i < 7; i++) expect((await scan(codes.poster, AGENTS.iphone, `198.51.100.${i}`, 'NL')).status).toBe(302)
      expect((await api(`/v1/dynqrcodes/${codes.poster}/analytics`)).status).toBe(503)
      await s.startProcess('analytics')
      await counted(codes.poster, 8, 15_000)
      await Bun.sleep(1000)
      expect(await breakdown(codes.poster)).toMatchObject({ total_scans: 8, unique_scans: 8, countries: [{ country: 'NL', scans: 7 }, { country: 'unknown', scans: 1 }] })
    }, 40_000)
  })
}
