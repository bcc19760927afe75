import { beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember, type Member } from '../harness/fixtures'
import { waitUntil } from '../harness/ports'
import { spawnExtraResolver, type Stack } from '../harness/stack'
import { BROWSER, pathOf } from './short-links.suite'

const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
const nowS = () => Math.floor(Date.now() / 1000)
const DAY_S = 86_400

/** Scans of `record` at once, as many clients would; the answers' status and Location. */
async function scanTogether(short: (path: string) => Promise<Response>, record: { short_url: string }, n: number) {
  const answers = await Promise.all(Array.from({ length: n }, () => short(pathOf(record))))
  return answers.map((r) => ({ status: r.status, location: r.headers.get('location') }))
}

function clientOf(stack: () => Stack, member: () => Member) {
  const api = (method: string, path: string, body?: unknown) => call(stack(), method, `/v1/dynqrcodes${path}`, { key: member().key, body })
  const create = async (fields: Record<string, unknown>) => {
    const res = await api('POST', '', { destination_url: 'https://example.com/offer', name: 'Limited', ...fields })
    expect(res.status).toBe(201)
    return res.body.created[0]
  }
  const scan = (record: { short_url: string }, agent = BROWSER) => stack().short(pathOf(record), { headers: { 'user-agent': agent } })
  const breakdown = async (code: string) => (await api('GET', `/${code}/analytics`)).body
  /** Polls the breakdown until it shows `total` scans and `fallback` fallbacks. */
  const counted = (code: string, total: number, fallback: number, ms = 5000) =>
    waitUntil(async () => {
      const b = await breakdown(code)
      return b.total_scans === total && b.fallback_scans === fallback
    }, ms, `${total} scans and ${fallback} fallbacks of ${code}`)
  return { api, create, scan, breakdown, counted }
}

/** Expiring and capped dynamic codes (README "Expiring and capped codes"; docs/decisions.md). */
export function expirySuite(stack: () => Stack) {
  describe('expiring and capped codes', () => {
    let own: Member
    beforeAll(async () => {
      own = await freshMember(stack())
    })
    const { api, create, scan, breakdown, counted } = clientOf(stack, () => own)
    const browser = (path: string) => stack().short(path, { headers: { 'user-agent': BROWSER } })

    describe('fields', () => {
      it('answers the fields given at create, fallback_url in its normal form, and none that were not given', async () => {
        const at = nowS() + DAY_S
        const record = await create({ expires_at: at, max_scans: 3, fallback_url: 'HTTPS://Example.com/Sorry' })
        expect(record).toMatchObject({ expires_at: at, max_scans: 3, fallback_url: 'https://example.com/Sorry' })
        const plain = await create({})
        expect(Object.keys(plain)).not.toContain('expires_at')
        expect(Object.keys(plain)).not.toContain('max_scans')
        expect(Object.keys(plain)).not.toContain('fallback_url')
        expect((await api('GET', `/${record.code}`)).body).toEqual(record)
      })

      it('accepts an expires_at in the past (the code is expired at once) and a fallback_url alone', async () => {
        expect((await create({ expires_at: nowS() - 60 })).expires_at).toBeLessThan(nowS())
        expect((await create({ fallback_url: 'https://example.com/later' })).fallback_url).toBe('https://example.com/later')
      })

      it('sets the fields by PATCH and clears each with null, keeping the others', async () => {
        const record = await create({})
        const set = await api('PATCH', `/${record.code}`, { expires_at: 2_000_000_000, max_scans: 10, fallback_url: 'https://example.com/x' })
        expect([set.status, set.body]).toMatchObject([200, { expires_at: 2_000_000_000, max_scans: 10, fallback_url: 'https://example.com/x' }])
        const cleared = await api('PATCH', `/${record.code}`, { max_scans: null, fallback_url: null })
        expect(cleared.status).toBe(200)
        expect(cleared.body.expires_at).toBe(2_000_000_000)
        expect(Object.keys(cleared.body)).not.toContain('max_scans')
        expect(Object.keys(cleared.body)).not.toContain('fallback_url')
        expect((await api('GET', `/${record.code}`)).body).toEqual(cleared.body)
      })

      it('creates a batch with the fields, per item', async () => {
        const res = await api('POST', '/batch', [
          { destination_url: 'https://example.com/a', name: 'A', max_scans: 2 },
          { destination_url: 'https://example.com/b', name: 'B', expires_at: 2_000_000_000, fallback_url: 'https://example.com/over' },
        ])
        expect(res.status).toBe(201)
        expect(res.body.created[0].max_scans).toBe(2)
        expect(res.body.created[1]).toMatchObject({ expires_at: 2_000_000_000, fallback_url: 'https://example.com/over' })
      })

      const invalid: [string, Record<string, unknown>, string][] = [
        ['expires_at as text', { expires_at: 'tomorrow' }, 'expires_at must be epoch seconds: an integer from 0 to 253402300799'],
        ['expires_at in milliseconds', { expires_at: Date.now() }, 'expires_at must be epoch seconds: an integer from 0 to 253402300799'],
        ['a negative expires_at', { expires_at: -1 }, 'expires_at must be epoch seconds: an integer from 0 to 253402300799'],
        ['max_scans 0', { max_scans: 0 }, 'max_scans must be an integer from 1 to 9007199254740991'],
        ['a fractional max_scans', { max_scans: 1.5 }, 'max_scans must be an integer from 1 to 9007199254740991'],
        ['a null max_scans', { max_scans: null }, 'max_scans must be an integer from 1 to 9007199254740991'],
        ['a max_scans past 2^53 - 1', { max_scans: 2 ** 53 }, 'max_scans must be an integer from 1 to 9007199254740991'],
        ['a fallback_url that is not http(s)', { fallback_url: 'ftp://example.com/x' }, 'fallback_url must be an absolute http or https URL with a host'],
        ['a fallback_url with a user name', { fallback_url: 'https://user@example.com/' }, 'fallback_url must not carry a user name or password (user@host)'],
        ['a fallback_url that is a number', { fallback_url: 7 }, 'fallback_url must be a string'],
      ]
      for (const [what, fields, message] of invalid) {
        it(`refuses ${what} at create with 400 "${message}" and stores nothing`, async () => {
          const before = (await api('GET', '?limit=100')).body.dynqrcodes.length
          const res = await api('POST', '', { destination_url: 'https://example.com/', name: 'Bad', ...fields })
          expect([res.status, res.body]).toEqual([400, { error: message }])
          expect((await api('GET', '?limit=100')).body.dynqrcodes.length).toBe(before)
        })
      }

      it('refuses a bad field in a PATCH with 400 naming null as the way to clear it, and changes nothing', async () => {
        const record = await create({ max_scans: 4 })
        const res = await api('PATCH', `/${record.code}`, { max_scans: 0 })
        expect([res.status, res.body]).toEqual([400, { error: 'max_scans must be an integer from 1 to 9007199254740991, or null to clear it' }])
        const text = await api('PATCH', `/${record.code}`, { expires_at: '2030-01-01' })
        expect([text.status, text.body]).toEqual([400, { error: `expires_at must be epoch seconds: an integer from 0 to 253402300799, or null to clear it` }])
        const url = await api('PATCH', `/${record.code}`, { fallback_url: 'javascript:alert(1)' })
        expect([url.status, url.body]).toEqual([400, { error: 'fallback_url must be an absolute http or https URL with a host' }])
        expect((await api('GET', `/${record.code}`)).body).toEqual(record)
      })

      it('names the failing item of a batch', async () => {
        const res = await api('POST', '/batch', [
          { destination_url: 'https://example.com/a', name: 'A' },
          { destination_url: 'https://example.com/b', name: 'B', max_scans: -3 },
        ])
        expect([res.status, res.body]).toEqual([400, { errors: [{ index: 1, error: 'max_scans must be an integer from 1 to 9007199254740991' }] }])
      })
    })

    describe('resolver', () => {
      it('redirects an expired code to its fallback_url, with the scan query forwarded', async () => {
        const record = await create({ expires_at: nowS() - 1, fallback_url: 'https://example.com/ended' })
        const res = await stack().short(`${pathOf(record)}?utm_source=poster`, { headers: { 'user-agent': BROWSER } })
        expect([res.status, res.headers.get('location')]).toEqual([302, 'https://example.com/ended?utm_source=poster'])
      })

      it('answers 410 for an expired code without fallback_url, as for a deleted one', async () => {
        const record = await create({ expires_at: nowS() - 1 })
        const res = await scan(record)
        expect([res.status, await res.text(), res.headers.get('content-type')]).toEqual([410, 'Gone: this short link has expired.\n', 'text/plain; charset=utf-8'])
      })

      it('redirects to the destination until expires_at', async () => {
        const record = await create({ expires_at: nowS() + DAY_S, fallback_url: 'https://example.com/ended' })
        const res = await scan(record)
        expect([res.status, res.headers.get('location')]).toEqual([302, 'https://example.com/offer'])
      })

      it('sends exactly max_scans of many concurrent scans to the destination and the rest to the fallback, counted apart', async () => {
        const record = await create({ max_scans: 5, fallback_url: 'https://example.com/sold-out' })
        const answers = await scanTogether(browser, record, 40)
        expect(answers.filter((a) => a.location === 'https://example.com/offer').length).toBe(5)
        expect(answers.filter((a) => a.location === 'https://example.com/sold-out').length).toBe(35)
        expect(answers.every((a) => a.status === 302)).toBe(true)
        await counted(record.code, 5, 35)
        const summary = (await api('GET', '/analytics')).body.analytics.find((c: { code: string }) => c.code === record.code)
        expect(summary.total_scans).toBe(5)
      }, 30_000)

      it('answers 410 once capped without fallback_url', async () => {
        const record = await create({ max_scans: 2 })
        const answers = await scanTogether(browser, record, 6)
        expect(answers.filter((a) => a.status === 302).length).toBe(2)
        expect(answers.filter((a) => a.status === 410).length).toBe(4)
        const res = await scan(record)
        expect([res.status, await res.text()]).toEqual([410, 'Gone: this short link reached its scan limit.\n'])
      })

      it('lets bots and HEAD requests through without taking from the cap', async () => {
        const record = await create({ max_scans: 1, fallback_url: 'https://example.com/over' })
        for (let i = 0; i < 3; i++) expect((await scan(record, GOOGLEBOT)).headers.get('location')).toBe('https://example.com/offer')
        const head = await stack().short(pathOf(record), { method: 'HEAD', headers: { 'user-agent': BROWSER } })
        expect([head.status, head.headers.get('location')]).toEqual([302, 'https://example.com/offer'])
        expect((await scan(record)).headers.get('location')).toBe('https://example.com/offer')
        expect((await scan(record)).headers.get('location')).toBe('https://example.com/over')
        expect((await scan(record, GOOGLEBOT)).headers.get('location')).toBe('https://example.com/over')
        await counted(record.code, 1, 1)
      })

      it('re-opens a capped code on the next scan when a PATCH raises max_scans, and an expired one when it moves expires_at', async () => {
        const capped = await create({ max_scans: 1 })
        expect((await scan(capped)).status).toBe(302)
        expect((await scan(capped)).status).toBe(410)
        expect((await api('PATCH', `/${capped.code}`, { max_scans: 3 })).status).toBe(200)
        const reopened = await scan(capped)
        expect([reopened.status, reopened.headers.get('location')]).toEqual([302, 'https://example.com/offer'])
        expect((await scan(capped)).status).toBe(302)
        expect((await scan(capped)).status).toBe(410)

        const expired = await create({ expires_at: nowS() - 1 })
        expect((await scan(expired)).status).toBe(410)
        expect((await api('PATCH', `/${expired.code}`, { expires_at: nowS() + DAY_S })).status).toBe(200)
        expect((await scan(expired)).status).toBe(302)
        expect((await api('PATCH', `/${expired.code}`, { expires_at: nowS() - 1 })).status).toBe(200)
        expect((await scan(expired)).status).toBe(410)
        expect((await api('PATCH', `/${expired.code}`, { expires_at: null })).status).toBe(200)
        expect((await scan(expired)).status).toBe(302)
      })

      it('caps a code at its next scan when a PATCH adds max_scans below the scans it already had', async () => {
        const record = await create({})
        for (let i = 0; i < 3; i++) expect((await scan(record)).status).toBe(302)
        await counted(record.code, 3, 0)
        expect((await api('PATCH', `/${record.code}`, { max_scans: 2, fallback_url: 'https://example.com/over' })).status).toBe(200)
        const next = await scan(record)
        expect(next.headers.get('location')).toBe('https://example.com/over')
        await counted(record.code, 3, 1)
      })
    })

    it('shows fallback_scans in the breakdown, apart from total_scans', async () => {
      const record = await create({ expires_at: nowS() - 1, fallback_url: 'https://example.com/ended' })
      for (let i = 0; i < 2; i++) expect((await scan(record)).status).toBe(302)
      await counted(record.code, 0, 2)
      expect(await breakdown(record.code)).toMatchObject({ total_scans: 0, unique_scans: 0, daily: [], fallback_scans: 2 })
    })
  })
}

/**
 * The cap across resolver processes and restarts (NATS only: separate resolver processes). The
 * stated bound: at most N x max_scans destination redirects over N resolvers; one resolver
 * restarted starts again from analytics' count.
 */
export function expiryReplicasSuite(stack: () => Stack) {
  describe('expiring and capped codes, several resolver processes', () => {
    let own: Member
    beforeAll(async () => {
      own = await freshMember(stack())
    })
    const { create, scan, counted } = clientOf(stack, () => own)

    it('keeps the count of a capped code across a restart of the resolver', async () => {
      const s = stack()
      const record = await create({ max_scans: 3, fallback_url: 'https://example.com/over' })
      for (let i = 0; i < 2; i++) expect((await scan(record)).headers.get('location')).toBe('https://example.com/offer')
      await counted(record.code, 2, 0)
      await s.stopProcess!('resolver')
      await s.startProcess!('resolver')
      expect((await scan(record)).headers.get('location')).toBe('https://example.com/offer')
      expect((await scan(record)).headers.get('location')).toBe('https://example.com/over')
      await counted(record.code, 3, 1)
    }, 60_000)

    it('sends at most 2 x max_scans to the destination over two resolvers scanned at once, and at least max_scans', async () => {
      const second = await spawnExtraResolver(stack())
      try {
        const record = await create({ max_scans: 4, fallback_url: 'https://example.com/over' })
        const one = (path: string) => stack().short(path, { headers: { 'user-agent': BROWSER } })
        const two = (path: string) => second.short(path, { headers: { 'user-agent': BROWSER } })
        const answers = (await Promise.all([scanTogether(one, record, 15), scanTogether(two, record, 15)])).flat()
        const sent = answers.filter((a) => a.location === 'https://example.com/offer').length
        expect(sent).toBeGreaterThanOrEqual(4)
        expect(sent).toBeLessThanOrEqual(8)
        await counted(record.code, sent, 30 - sent)
        // Once analytics has every scan, a resolver that looks the code up again knows it is capped.
        const third = await spawnExtraResolver(stack())
        try {
          const res = await third.short(pathOf(record), { headers: { 'user-agent': BROWSER } })
          expect(res.headers.get('location')).toBe('https://example.com/over')
        } finally {
          await third.stop()
        }
      } finally {
        await second.stop()
      }
    }, 60_000)
  })
}
