import { isBotAgent } from '@lr/platform/bots'

/**
 * Crawlers and link-preview fetchers whose requests are redirected but not counted as scans
 * (docs/decisions.md §5): isbot's maintained list, shared with analytics (platform/src/bots.ts).
 * A missing User-Agent and hand-run tools such as curl are clients, not bots.
 */
export const isBot = isBotAgent
