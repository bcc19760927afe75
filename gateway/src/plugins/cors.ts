import { Elysia } from 'elysia'
import { headers as documentedHeaders } from '../routes/openapi-components'
import { appendVary } from './set-headers'

/** What a browser may send beyond the CORS-safelisted headers (docs/decisions.md §10). */
const ALLOW_HEADERS = 'x-api-key, content-type, idempotency-key, if-match, if-none-match, x-request-id'
const ALLOW_METHODS = 'GET, HEAD, POST, PATCH, DELETE'
/** What a page's script may read of an answer: every response header the API document promises. */
const EXPOSE_HEADERS = Object.keys(documentedHeaders).join(', ')
/** Seconds a browser may reuse a preflight answer: 2 hours, the most Chromium honours. */
const MAX_AGE_S = '7200'

/**
 * The answer to a preflight, thrown from onRequest: Elysia sends what `toResponse` gives, and
 * unlike a Response returned from onRequest it still runs the access log and metrics (observe.ts).
 */
class PreflightAnswer {
  toResponse() {
    return new Response(null, {
      status: 204,
      headers: {
        'access-control-allow-methods': ALLOW_METHODS,
        'access-control-allow-headers': ALLOW_HEADERS,
        'access-control-max-age': MAX_AGE_S,
      },
    })
  }
}

/** CORS_ORIGINS as a list: `*`, exact origins, or nothing (CORS off). Validated by proto's config. */
const originsOf = (setting: string): string[] =>
  setting.split(',').map((origin) => origin.trim().toLowerCase()).filter(Boolean)

/**
 * CORS for browser clients, off unless CORS_ORIGINS names origins. Runs before the key check:
 * a browser's preflight never carries x-api-key, so it must not meet the 403. An origin not
 * listed gets no CORS header at all (its preflight goes on like any OPTIONS request and the
 * browser refuses the answer). No credentials: the API key is a header, never a cookie.
 */
export function cors(setting = '') {
  const origins = originsOf(setting)
  const plugin = new Elysia({ name: 'cors' })
  if (origins.length === 0) return plugin
  const any = origins.includes('*')
  const allowed = new Set(origins)
  return plugin.onRequest(({ request, set }) => {
    // Answers differ per Origin when origins are listed, also those without a CORS header (no
    // Origin, or one not listed): shared caches must keep them all apart.
    if (!any) appendVary(set.headers, 'Origin')
    const origin = request.headers.get('origin')
    if (!origin || !(any || allowed.has(origin.toLowerCase()))) return
    set.headers['access-control-allow-origin'] = any ? '*' : origin
    if (request.method === 'OPTIONS' && request.headers.has('access-control-request-method')) {
      set.status = 204
      throw new PreflightAnswer()
    }
    set.headers['access-control-expose-headers'] = EXPOSE_HEADERS
  })
}
