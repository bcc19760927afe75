/**
 * Crawlers and link-preview fetchers whose requests are redirected but not counted as scans
 * (api-contract.md §5). A short maintained list plus the generic words such clients use; plain
 * HTTP clients (curl, wget, libraries) are clients, not bots. The analytics issue may replace
 * this with the `isbot` package.
 */
const BOTS = new RegExp(
  [
    'googlebot', 'google-inspectiontool', 'adsbot-google', 'mediapartners-google', 'bingbot', 'bingpreview', 'slurp',
    'duckduckbot', 'baiduspider', 'yandex(bot|images)', 'applebot', 'petalbot', 'semrushbot', 'ahrefsbot', 'mj12bot',
    'slackbot', 'slack-imgproxy', 'facebookexternalhit', 'facebookcatalog', 'meta-externalagent', 'twitterbot',
    'linkedinbot', 'whatsapp', 'telegrambot', 'discordbot', 'skypeuripreview', 'pinterestbot', 'pinterest/0\\.', 'redditbot',
    'embedly', 'iframely', 'vkshare', 'mastodon', 'crawl', 'spider', 'preview',
    // Generic `...bot`, but not the phone brand Cubot.
    '(?<!cu)bot\\b',
    'headlesschrome', 'lighthouse',
  ].join('|'),
  'i',
)

/** True for a User-Agent of a crawler or link-preview fetcher. A missing one is not a bot. */
export const isBot = (userAgent: string): boolean => BOTS.test(userAgent)
