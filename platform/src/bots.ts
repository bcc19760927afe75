import { isbot } from 'isbot'

/**
 * The longest User-Agent a per-agent memo keeps (the resolver's isBot, analytics' agent cache):
 * browsers' and apps' agents are a few hundred characters, and a memo of 10,000 agents then stays
 * near 10 MB. Longer ones are judged anew each time: a client can send agents up to Bun's 16 KiB
 * header limit, and 10,000 of those kept whole had been 150 MB per memo.
 */
export const REMEMBERED_AGENT_CHARS = 1024

/** Command-line HTTP tools: a person checking a link by hand, counted like a browser. */
const HAND_TOOLS = /^(curl|wget|httpie|xh)\//i

/**
 * True for the User-Agent of a crawler, a link-preview fetcher or an HTTP library
 * (docs/decisions.md §5: redirected but not counted), by isbot's maintained list of ~200 patterns.
 * Exceptions: no User-Agent at all, and hand-run tools (curl, wget, HTTPie), are counted.
 * The resolver decides with it which scans to publish; analytics applies it again to what arrives.
 */
export const isBotAgent = (userAgent: string): boolean => userAgent.trim() !== '' && !HAND_TOOLS.test(userAgent) && isbot(userAgent)
