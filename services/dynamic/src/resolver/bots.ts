import { isBotAgent, REMEMBERED_AGENT_CHARS } from '@lr/platform/bots'

/** Distinct User-Agents remembered; past it the memory starts over (a flood of made-up agents cannot grow it). */
const MAX_AGENTS = 10_000
const verdicts = new Map<string, boolean>()

/**
 * Crawlers and link-preview fetchers whose requests are redirected but not counted as scans
 * (docs/decisions.md §5): isbot's maintained list, shared with analytics (platform/src/bots.ts).
 * A missing User-Agent and hand-run tools such as curl are clients, not bots.
 * Remembered per User-Agent: isbot's ~200-pattern regex costs 3-4 µs a call on the resolver's hot
 * path, and scans come from few distinct agents. Not one longer than REMEMBERED_AGENT_CHARS: no
 * browser sends one, and kept whole they cost memory at a client's choosing. One comparison a redirect.
 */
export function isBot(userAgent: string): boolean {
  if (userAgent.length > REMEMBERED_AGENT_CHARS) return isBotAgent(userAgent)
  let verdict = verdicts.get(userAgent)
  if (verdict === undefined) {
    verdict = isBotAgent(userAgent)
    if (verdicts.size >= MAX_AGENTS) verdicts.clear()
    verdicts.set(userAgent, verdict)
  }
  return verdict
}
