import { beforeAll, describe, expect, it } from 'bun:test'
import type { ScanEvent } from '@lr/proto'
import { scanSubject } from '@lr/proto'
import { call } from '../harness/client'
import { freshMember, type Libraries, type Member, seedLibraries } from '../harness/fixtures'
import { waitUntil } from '../harness/ports'
import type { Stack } from '../harness/stack'

export const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1'
/** The path of a record's short_url, as the resolver sees it. */
export const pathOf = (record: { short_url: string }) => new URL(record.short_url).pathname

/** The short-link resolver of a deployment (docs/decisions.md §5, issue: resolver and scan events). */
export function shortLinksSuite(stack: () => Stack) {
  describe('short links', () => {
    let lib: Libraries
    let own: Member
    const api = (method: string, path: string, key: string, body?: unknown) => call(stack(), method, path, { key, body })
    const create = async (key: string, destination_url = 'https://example.com/landing') =>
      (await api('POST', '/v1/dynqrcodes', key, { destination_url, name: 'Scan me' })).body.created[0]
    const scan = (path: string, init: RequestInit = {}) => stack().short(path, { headers: { 'user-agent': BROWSER }, ...init })

    /** Collects the scan events of one code from the deployment's bus. */
    async function watchScans(code: string) {
      const events: ScanEvent[] = []
      const unsubscribe = stack().bus.subscribe(scanSubject(code), (event) => void events.push(event as ScanEvent))
      await stack().bus.ping() // the subscription is in place before the first scan
      return { events, unsubscribe, arrived: (n: number) => waitUntil(() => events.length >= n, 3000, `${n} scan event(s) of ${code}`) }
    }

    beforeAll(async () => {
      lib = await seedLibraries(stack())
      own = await freshMember(stack())
    })

    it('redirects an active code with 302, its destination and Cache-Control: private, no-store', async () => {
      const record = await create(own.key, 'https://example.com/landing?utm_source=qr')
      const res = await scan(pathOf(record))
      expect([res.status, res.headers.get('location'), res.headers.get('cache-control')]).toEqual([302, 'https://example.com/landing?utm_source=qr', 'private, no-store'])
    })

    it('forwards the scan\'s query string, keeping the destination\'s own value on a clash', async () => {
      const record = await create(own.key, 'https://example.com/landing?utm_source=qr')
      const res = await scan(`${pathOf(record)}?utm_source=poster&table=12`)
      expect(res.headers.get('location')).toBe('https://example.com/landing?utm_source=qr&table=12')
    })

    it('answers 404 in plain text for an unknown code and for a draft, which resolves once an admin approves it', async () => {
      const unknown = await scan('/Unknown0')
      expect([unknown.status, unknown.headers.get('content-type'), await unknown.text()]).toEqual([404, 'text/plain; charset=utf-8', 'Not found: no such short link.\n'])
      const draft = await create(lib.teamWriter.key)
      expect((await scan(pathOf(draft))).status).toBe(404)
      expect((await api('PATCH', `/v1/dynqrcodes/${draft.code}`, lib.teamAdmin.key, { status: 'active' })).status).toBe(200)
      expect((await scan(pathOf(draft))).status).toBe(302)
    })

    it('answers 410 once a code is soft-deleted, and never issues that code again', async () => {
      const record = await create(own.key)
      expect((await scan(pathOf(record))).status).toBe(302)
      expect((await api('DELETE', `/v1/dynqrcodes/${record.code}`, own.key)).status).toBe(200)
      const gone = await scan(pathOf(record))
      expect([gone.status, await gone.text()]).toEqual([410, 'Gone: this short link was deleted.\n'])
      const more = (await api('POST', '/v1/dynqrcodes/batch', own.key, Array.from({ length: 50 }, (_, i) => ({ destination_url: 'https://example.com/', name: `n${i}` })))).body.created
      expect(more.map((r: any) => r.code)).not.toContain(record.code)
      expect((await scan(pathOf(record))).status).toBe(410)
    })

    it('follows a changed destination on the very next scan', async () => {
      const record = await create(own.key, 'https://old.example/')
      expect((await scan(pathOf(record))).headers.get('location')).toBe('https://old.example/')
      expect((await api('PATCH', `/v1/dynqrcodes/${record.code}`, own.key, { destination_url: 'https://new.example/' })).status).toBe(200)
      const next = await scan(pathOf(record))
      expect(next.headers.get('location')).toBe('https://new.example/')
    })

    // README "The short-link resolver": a code belongs to its library, not to the key that made it.
    it('keeps resolving the codes of a revoked key, cached or looked up afterwards', async () => {
      const maker = await freshMember(stack())
      const [seen, unseen] = [await create(maker.key, 'https://example.com/seen'), await create(maker.key, 'https://example.com/unseen')]
      expect((await scan(pathOf(seen))).status).toBe(302)
      await stack().admin('key', 'revoke', '--key-id', maker.key_id)
      expect((await api('GET', '/v1/dynqrcodes', maker.key)).status).toBe(403)
      const answers = [await scan(pathOf(seen)), await scan(pathOf(unseen))]
      expect(answers.map((res) => [res.status, res.headers.get('location')])).toEqual([[302, 'https://example.com/seen'], [302, 'https://example.com/unseen']])
    })

    it('answers 404 to malformed paths', async () => {
      for (const path of ['/', '/abc', `/${'a'.repeat(40)}`, '/abc-defg', '/abcdefg..', '/..%2f..%2fetc%2fpasswd', '/%2e%2e/%2e%2e', '/abc%00defg', '/%E2%82%AC%E2%82%AC%E2%82%AC%E2%82%AC', '/analytics']) {
        const res = await scan(path)
        expect([res.status, await res.text()], path).toEqual([404, 'Not found: no such short link.\n'])
      }
    })

    it('publishes each counted scan on scans.<code>, with no client address on the wire', async () => {
      const record = await create(own.key)
      const watch = await watchScans(record.code)
      const before = Date.now()
      await scan(pathOf(record), { headers: { 'user-agent': BROWSER, referer: 'https://poster.example/' } })
      await watch.arrived(1)
      watch.unsubscribe()
      expect(watch.events).toEqual([{
        scan_id: expect.any(String), code: record.code, scanned_at: expect.any(Number), user_agent: BROWSER,
        visitor_id: expect.stringMatching(/^[0-9a-f]{64}$/), country: 'unknown', referer: 'https://poster.example/',
      }])
      expect(Math.abs(watch.events[0]!.scanned_at - before)).toBeLessThan(5000)
      expect(JSON.stringify(watch.events)).not.toMatch(/127\.0\.0\.1|::1|::ffff/)
    })

    it('redirects HEAD and crawlers without publishing a scan', async () => {
      const record = await create(own.key)
      const watch = await watchScans(record.code)
      const head = await scan(pathOf(record), { method: 'HEAD' })
      const bot = await scan(pathOf(record), { headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' } })
      const person = await scan(pathOf(record))
      expect([head.status, bot.status, person.status]).toEqual([302, 302, 302])
      await watch.arrived(1)
      await Bun.sleep(200)
      watch.unsubscribe()
      expect(watch.events.map((e) => e.user_agent)).toEqual([BROWSER])
    })
  })
}
