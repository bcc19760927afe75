import { describe, expect, it } from 'bun:test'
import { heapKeptByLongAgents } from '@lr/platform/testing/long-agents'
import { createAgentCache, parseAgent } from '../src/enrich'
import { UA } from './fixtures'

describe('parseAgent (ua-parser-js 1.x and isbot)', () => {
  it('reads an iPhone with Safari as mobile, iOS, Mobile Safari', () => {
    expect(parseAgent(UA.iphone)).toEqual({ device: 'mobile', os: 'iOS', browser: 'Mobile Safari', bot: false })
  })

  it('reads an iPad as tablet, iOS, Mobile Safari', () => {
    expect(parseAgent(UA.ipad)).toEqual({ device: 'tablet', os: 'iOS', browser: 'Mobile Safari', bot: false })
  })

  it('reads an Android phone with Chrome as mobile, Android, Chrome', () => {
    expect(parseAgent(UA.android)).toEqual({ device: 'mobile', os: 'Android', browser: 'Chrome', bot: false })
  })

  it('reads Windows 10 with Chrome as desktop, Windows, Chrome', () => {
    expect(parseAgent(UA.windows)).toEqual({ device: 'desktop', os: 'Windows', browser: 'Chrome', bot: false })
  })

  it('recognises Googlebot as a bot', () => {
    expect(parseAgent(UA.googlebot).bot).toBe(true)
  })

  it('recognises the Slack link preview as a bot', () => {
    expect(parseAgent(UA.slack).bot).toBe(true)
  })

  it('reads a smart TV as its own device type', () => {
    const tv = 'Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36'
    expect(parseAgent(tv)).toMatchObject({ device: 'smarttv', os: 'Tizen', bot: false })
  })

  it('answers unknown for every field of an empty user agent, not a bot', () => {
    expect(parseAgent('')).toEqual({ device: 'unknown', os: 'unknown', browser: 'unknown', bot: false })
  })

  it('answers desktop and unknown for what ua-parser cannot name', () => {
    expect(parseAgent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) Kiosk')).toEqual({ device: 'desktop', os: 'Windows', browser: 'unknown', bot: false })
  })

  it('recognises an HTTP library as a bot', () => {
    expect(parseAgent('python-requests/2.31.0').bot).toBe(true)
  })

  it('counts curl, a person checking a link by hand, as the resolver does', () => {
    expect(parseAgent('curl/8.5.0')).toEqual({ device: 'desktop', os: 'unknown', browser: 'unknown', bot: false })
  })
})

describe('createAgentCache', () => {
  it('answers the same result as parseAgent, from memory the second time', () => {
    const agentOf = createAgentCache(2)
    const first = agentOf(UA.iphone)
    expect(first).toEqual(parseAgent(UA.iphone))
    expect(agentOf(UA.iphone)).toBe(first)
  })

  it('forgets the least recently used agent beyond its size', () => {
    const agentOf = createAgentCache(2)
    const iphone = agentOf(UA.iphone)
    agentOf(UA.ipad)
    agentOf(UA.iphone) // iPad is now the least recently used
    agentOf(UA.windows)
    expect(agentOf(UA.iphone)).toBe(iphone)
    const ipad = agentOf(UA.ipad)
    expect(agentOf(UA.ipad)).toBe(ipad)
    expect(ipad).toEqual(parseAgent(UA.ipad))
  })
})

// A scan's user_agent is the header as sent, up to Bun's 16 KiB: the cache had kept 10,000 of them
// whole, 150 MB of the ingest thread's heap for one client's made-up agents (163 MB measured).
describe('createAgentCache against very long agents', () => {
  it('keeps no memory for agents longer than any real one (each parsed anew), and still reads them', () => {
    const agentOf = createAgentCache()
    expect(heapKeptByLongAgents(agentOf)).toBeLessThan(2_000_000)
    expect(agentOf(`${UA.windows} ${'a'.repeat(15_000)}`)).toMatchObject({ os: 'Windows', bot: false })
  })
})
