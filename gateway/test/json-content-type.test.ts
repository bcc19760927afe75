import { describe, expect, it } from 'bun:test'
import { ANALYTICS_SUBJECTS, AppError, JSON_CONTENT_TYPE, RECORDS_SUBJECTS } from '@lr/proto'
import { createGateway } from '../src/app'
import { GOOD_KEY, scriptedBus } from './fake-bus'

const record = (n: number) => ({
  qr_id: `qr_${n}`, url: `https://example.com/${n}`, name: `Code ${n}`, style: {}, tags: [], status: 'active',
  team_id: null, created_by: 'acct_1', created_at: 1_700_000_000, updated_at: 1_700_000_000,
})
/**
 * The real gateway over a scripted bus: records answers get and list (list pages come as the
 * service's bytes, ready-json.ts), no service answers delete; `limited` refuses every key as a
 * spent rate limit does, `ready` is what /readyz's one check answers.
 */
function gateway({ ready = true, limited = false } = {}) {
  const { bus } = scriptedBus({
    [RECORDS_SUBJECTS.get]: () => ({ record: record(1) }),
    [RECORDS_SUBJECTS.list]: ({ query }) => ({ qrcodes: Array.from({ length: Number(query.limit ?? 2) }, (_, n) => record(n)), next_cursor: null }),
    [ANALYTICS_SUBJECTS.summary]: () => ({ analytics: [{ code: 'Code0001', total_scans: 1, unique_scans: 1 }], next_cursor: null }),
  })
  const admit = async () => {
    if (limited) throw new AppError('rate_limited', 'rate limit exceeded: 10 requests per second', { retryAfter: 1 })
    return {}
  }
  return createGateway({ bus, admit, readiness: { bus: async () => ready } })
}

const key = { 'x-api-key': GOOD_KEY }
const json = { ...key, 'content-type': 'application/json' }
/** Every kind of JSON answer the API gives: [what, path, request, status]. */
const ANSWERS: [string, string, RequestInit, number][] = [
  ['one record', '/v1/qrcodes/qr_1', { headers: key }, 200],
  ['a small list page, the service\'s own bytes', '/v1/qrcodes?limit=2', { headers: key }, 200],
  ['a list page over 8 KiB, sent in pieces', '/v1/qrcodes?limit=200', { headers: key }, 200],
  ['the analytics summary, joined from pages', '/v1/dynqrcodes/analytics', { headers: key }, 200],
  ['400 malformed JSON', '/v1/qrcodes', { method: 'POST', headers: json, body: '{"url": ' }, 400],
  ['403 an unknown key', '/v1/qrcodes', { headers: { 'x-api-key': 'lrp_unknown' } }, 403],
  ['404 an unknown route', '/v1/nothing', { headers: key }, 404],
  ['404 outside /v1', '/nothing', {}, 404],
  ['405 a method the path does not take', '/v1/qrcodes', { method: 'PUT', headers: key }, 405],
  ['413 a body over 1 MiB', '/v1/qrcodes', { method: 'POST', headers: json, body: JSON.stringify({ url: 'https://e.com', name: 'x'.repeat(1_100_000) }) }, 413],
  ['415 a body that is not JSON', '/v1/qrcodes', { method: 'POST', headers: { ...key, 'content-type': 'text/plain' }, body: '{}' }, 415],
  ['503 no service answers', '/v1/qrcodes/qr_1', { method: 'DELETE', headers: key }, 503],
  ['/docs/json', '/docs/json', {}, 200],
  ['/healthz', '/healthz', {}, 200],
  ['/readyz', '/readyz', {}, 200],
]

// docs/decisions.md §8: one spelling for every JSON answer (errors had a space, 200s none, and a
// small answer to a client accepting gzip took the error's).
describe('the content type of every JSON answer', () => {
  for (const encoding of [null, 'gzip', 'br']) {
    const as = encoding ? `asked with Accept-Encoding: ${encoding}` : 'asked without Accept-Encoding'
    for (const [what, path, init, status] of ANSWERS) {
      it(`is ${JSON_CONTENT_TYPE} for ${what}, ${as}`, async () => {
        const headers = new Headers(init.headers)
        if (encoding) headers.set('accept-encoding', encoding)
        const res = await gateway().handle(new Request(`http://localhost${path}`, { ...init, headers }))
        expect([res.status, res.headers.get('content-type')]).toEqual([status, JSON_CONTENT_TYPE])
      })
    }

    it(`is ${JSON_CONTENT_TYPE} for a 429, ${as}`, async () => {
      const res = await gateway({ limited: true }).handle(new Request('http://localhost/v1/qrcodes', { headers: { ...key, ...(encoding && { 'accept-encoding': encoding }) } }))
      expect([res.status, res.headers.get('content-type')]).toEqual([429, JSON_CONTENT_TYPE])
    })

    it(`is ${JSON_CONTENT_TYPE} for a 503 of /readyz, ${as}`, async () => {
      const res = await gateway({ ready: false }).handle(new Request('http://localhost/readyz', { headers: encoding ? { 'accept-encoding': encoding } : {} }))
      expect([res.status, res.headers.get('content-type')]).toEqual([503, JSON_CONTENT_TYPE])
    })
  }
})
