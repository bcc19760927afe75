import { UAParser } from 'ua-parser-js'
import { isBotAgent, REMEMBERED_AGENT_CHARS } from '@lr/platform/bots'

/** What a user agent tells about the client of a scan. */
export interface Agent {
  /** ua-parser's device type (`mobile`, `tablet`, `smarttv`, ...), `desktop` when it names none, `unknown` without a user agent. */
  device: string
  /** OS name as ua-parser 1.x spells it (`iOS`, `Android`, `Windows`), or `unknown`. */
  os: string
  /** Browser name as ua-parser 1.x spells it (`Mobile Safari`, `Chrome`), or `unknown`. */
  browser: string
  /** A crawler, link-preview fetcher or HTTP library by isbot's maintained list (platform/src/bots.ts): not counted. */
  bot: boolean
}

/** Parses a user agent; no cache. */
export function parseAgent(userAgent: string): Agent {
  if (userAgent.trim() === '') return { device: 'unknown', os: 'unknown', browser: 'unknown', bot: false }
  const { device, os, browser } = new UAParser(userAgent).getResult()
  return { device: device.type || 'desktop', os: os.name || 'unknown', browser: browser.name || 'unknown', bot: isBotAgent(userAgent) }
}

/**
 * parseAgent behind a bounded LRU cache keyed by the user agent: scans come from few distinct
 * agents, and parsing one costs microseconds that ingestion at thousands of scans/s should not pay.
 * One longer than REMEMBERED_AGENT_CHARS is parsed each time, never kept (no browser sends one).
 */
export function createAgentCache(maxEntries = 10_000): (userAgent: string) => Agent {
  const cache = new Map<string, Agent>()
  return (userAgent) => {
    if (userAgent.length > REMEMBERED_AGENT_CHARS) return parseAgent(userAgent)
    let agent = cache.get(userAgent)
    if (agent) {
      cache.delete(userAgent)
    } else {
      agent = parseAgent(userAgent)
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!)
    }
    cache.set(userAgent, agent)
    return agent
  }
}
