import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { type Bus, SCAN_BATCH_EVENT } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { ScanEvent } from '@lr/proto'
import { BROWSER, NOW_MS, resolverSetup, settle } from './fixtures'

let s: ReturnType<typeof resolverSetup>
beforeEach(() => {
  s = resolverSetup()
})
afterEach(() => s.close())

describe('scan events', () => {
  it('publishes one event per GET of an active code on scans.<code>', async () => {
    const code = await s.code()
    const seen: string[] = []
    s.bus.subscribe(`scans.${code}`, (_event, subject) => void seen.push(subject))
    await s.scan(`/${code}`, { headers: { 'user-agent': BROWSER, referer: 'https://menu.example/' } })
    await settle()
    expect(s.scans).toEqual([{
      scan_id: expect.stringMatching(/^[0-9a-f-]{36}$/), code, scanned_at: NOW_MS, user_agent: BROWSER,
      visitor_id: expect.stringMatching(/^[0-9a-f]{64}$/), country: 'unknown', referer: 'https://menu.example/',
    }])
    expect(Value.Check(ScanEvent, s.scans[0])).toBe(true)
    expect(seen).toEqual([`scans.${code}`])
  })

  // Headers up to Bun's 16 KiB reached the event whole: a client sending 15 KB agents had every
  // scan weigh that much in each consumer's buffer of 100,000 (bun start grew to 1.46 GB in 10 s
  // of one wrk client, analytics 34,000 scans behind), in SCANS and in every scan webhook.
  it('carries the first 1,024 characters of the User-Agent and 2,048 of the Referer, the visitor told by the whole agent', async () => {
    const code = await s.code()
    const agent = (tail: string) => `${BROWSER} ${tail.repeat(15_000)}`
    const referer = `https://menu.example/?q=${'r'.repeat(15_000)}`
    await s.scan(`/${code}`, { headers: { 'user-agent': agent('a'), referer } })
    await s.scan(`/${code}`, { headers: { 'user-agent': agent('b') } })
    await settle()
    expect(s.scans.map((scan) => [scan.user_agent, scan.referer])).toEqual([[agent('a').slice(0, 1024), referer.slice(0, 2048)], [agent('b').slice(0, 1024), undefined]])
    expect(Value.Check(ScanEvent, s.scans[0])).toBe(true)
    expect(s.scans[0]!.visitor_id).not.toBe(s.scans[1]!.visitor_id)
  })

  it('gives every scan its own scan_id and one visitor the same visitor_id', async () => {
    const code = await s.code()
    await s.scan(`/${code}`)
    await s.scan(`/${code}`)
    await settle()
    expect(s.scans[0]!.scan_id).not.toBe(s.scans[1]!.scan_id)
    expect(s.scans[0]!.visitor_id).toBe(s.scans[1]!.visitor_id)
  })

  it('puts no client address on the wire', async () => {
    const proxied = resolverSetup({ trustProxy: 1 })
    const code = await proxied.code()
    await proxied.scan(`/${code}`, { headers: { 'user-agent': BROWSER, 'x-forwarded-for': '203.0.113.77, 10.0.0.1' } })
    await settle()
    expect(JSON.stringify(proxied.scans)).not.toContain('203.0.113')
    await proxied.close()
  })

  it('behind a trusted proxy, tells visitors apart by X-Forwarded-For and takes the country from CF-IPCountry', async () => {
    const proxied = resolverSetup({ trustProxy: 1 })
    const code = await proxied.code()
    const from = (ip: string, country: string) => ({ headers: { 'user-agent': BROWSER, 'x-forwarded-for': ip, 'cf-ipcountry': country } })
    await proxied.scan(`/${code}`, from('203.0.113.1', 'de'))
    await proxied.scan(`/${code}`, from('203.0.113.1', 'XX'))
    await proxied.scan(`/${code}`, from('203.0.113.2', 'FR'))
    await settle()
    expect(proxied.scans.map((e) => e.country)).toEqual(['DE', 'unknown', 'FR'])
    const [a, b, c] = proxied.scans.map((e) => e.visitor_id)
    expect(a).toBe(b!)
    expect(a).not.toBe(c!)
    await proxied.close()
  })

  it('ignores CF-IPCountry and X-Forwarded-For when the proxy is not trusted', async () => {
    const code = await s.code()
    await s.scan(`/${code}`, { headers: { 'user-agent': BROWSER, 'x-forwarded-for': '203.0.113.1', 'cf-ipcountry': 'DE' } })
    await s.scan(`/${code}`, { headers: { 'user-agent': BROWSER, 'x-forwarded-for': '203.0.113.2' } })
    await settle()
    expect(s.scans.map((e) => e.country)).toEqual(['unknown', 'unknown'])
    expect(s.scans[0]!.visitor_id).toBe(s.scans[1]!.visitor_id)
  })

  it('publishes nothing for a HEAD', async () => {
    const code = await s.code()
    expect((await s.scan(`/${code}`, { method: 'HEAD' })).status).toBe(302)
    await settle()
    expect(s.scans).toEqual([])
  })

  for (const bot of ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'facebookexternalhit/1.1', 'WhatsApp/2.23.20.0']) {
    it(`redirects the crawler "${bot.slice(0, 30)}" but publishes nothing`, async () => {
      const code = await s.code()
      expect((await s.scan(`/${code}`, { headers: { 'user-agent': bot } })).status).toBe(302)
      await settle()
      expect(s.scans).toEqual([])
    })
  }

  it('publishes nothing for a 404 or a 410', async () => {
    const draft = await s.code(undefined, 'draft')
    await s.scan(`/${draft}`)
    await s.scan('/Unknown1')
    await settle()
    expect(s.scans).toEqual([])
  })

  it('hands scans to an injected publisher instead of the bus when given one', async () => {
    const handed: string[] = []
    const custom = resolverSetup({ publishScan: (event) => void handed.push(event.code) })
    const code = await custom.code()
    await custom.scan(`/${code}`)
    await settle()
    expect([handed, custom.scans]).toEqual([[code], []])
    await custom.close()
  })

  it('redirects without waiting for the scan event to be published', async () => {
    const inner = createLocalBus()
    let publishing = 0
    const never = new Promise<void>(() => undefined)
    const scanning = (subject: string) => subject === SCAN_BATCH_EVENT || subject.startsWith('scans.')
    const bus: Bus = { ...inner, publish: (subject, event) => (scanning(subject) ? (publishing++, never) : inner.publish(subject, event)) }
    const stuck = resolverSetup({ bus })
    const code = await stuck.code()
    expect((await stuck.scan(`/${code}`)).status).toBe(302)
    // Published after the answer, with the scans of its turn: the batch, and the scan on scans.<code> (the fixture subscribes there).
    await Bun.sleep(10)
    expect(publishing).toBe(2)
    await stuck.close()
  })

  it('still redirects when publishing the scan fails (and logs it)', async () => {
    const inner = createLocalBus()
    const bus: Bus = { ...inner, publish: async (subject, event) => { if (subject === SCAN_BATCH_EVENT || subject.startsWith('scans.')) throw new Error('bus down'); await inner.publish(subject, event) } }
    const failing = resolverSetup({ bus })
    const code = await failing.code()
    expect((await failing.scan(`/${code}`)).status).toBe(302)
    await failing.close()
  })
})
