import { isbot } from 'isbot'

/** Command-line HTTP tools: a person checking a link by hand, counted like a browser. */
const HAND_TOOLS = /^(curl|wget|httpie|xh)\//i

/**
 * True for the User-Agent of a crawler, a link-preview fetcher or an HTTP library
 * (docs/decisions.md §5: redirected but not counted), by isbot's maintained list of ~200 patterns.
 * Exceptions: no User-Agent at all, and hand-run tools (curl, wget, HTTPie), are counted.
 * The resolver decides with it which scans to publish; analytics applies it again to what arrives.
 */
export const isBotAgent = (userAgent: string): boolean => userAgent.trim() !== '' && !HAND_TOOLS.test(userAgent) && isbot(userAgent)
