import { Elysia } from 'elysia'
import { compressStream, compressSync, negotiate } from './content-coding'
import { statusOf } from './observe'
import { appendVary } from './set-headers'
import { JSON_CONTENT_TYPE } from '@lr/proto'
import { readyJsonBytes } from '../ready-json'

/** Below this a JSON answer goes as it is: compressing it would save a few bytes for the work. */
const COMPRESS_MIN_BYTES = 1024

const isPlainJson = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && (Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype)

const isCsv = (response: Response) => response.headers.get('content-type')?.startsWith('text/csv') === true

/**
 * gzip or br for the API's JSON answers of at least 1 KiB (also those sent as a service's own
 * bytes, ready-json.ts) and for CSV exports, when the client's
 * Accept-Encoding allows (docs/decisions.md §10). JSON is compressed in one piece; an export as a
 * stream, so its memory stays flat. Answers that carry an ETag are left alone: one tag must not
 * name two different byte sequences. Only this API's listener: the resolver is not an Elysia app
 * and never sees this.
 */
export const compression = new Elysia({ name: 'compression' }).mapResponse({ as: 'global' }, (context) => {
  // Named fields only: a hook that hands its whole context on makes Elysia's inference assume
  // it reads everything, and every route then parses cookies, query and headers for nothing.
  const { request, responseValue, set, error } = context as typeof context & { error?: unknown }
  // Every JSON answer in one spelling (JSON_CONTENT_TYPE), compressed or not: Bun's would differ.
  if (isPlainJson(responseValue) && !set.headers['content-type']) set.headers['content-type'] = JSON_CONTENT_TYPE
  const response = compressed(request, responseValue, set)
  if (response || error === undefined) return response
  // Elysia 1.4's global error path (a 403 from onRequest, a 404; the only one that sets `error`)
  // sends what a mapResponse hook returns even when it is undefined: an empty body. Only there,
  // hand the answer back as it is; elsewhere a value would stop the mapResponse hooks after this one.
  return responseValue as Response
})

function compressed(request: Request, responseValue: unknown, set: { status?: unknown; headers: Record<string, unknown> }) {
  if (set.headers.etag) return
  const ready = responseValue instanceof Response ? readyJsonBytes(responseValue) : undefined
  const response = responseValue instanceof Response && !ready ? responseValue : undefined
  if (response ? !isCsv(response) : !(ready || isPlainJson(responseValue))) return
  // Whatever this client gets, another Accept-Encoding may get other bytes at this URL.
  appendVary(set.headers, 'Accept-Encoding')
  const coding = negotiate(request.headers.get('accept-encoding'))
  // HEAD has no body to encode (Elysia drops the GET route's).
  if (!coding || request.method === 'HEAD') return
  if (response) {
    if (!response.body || response.headers.has('content-encoding')) return
    const headers = new Headers(response.headers)
    headers.set('content-encoding', coding)
    headers.delete('content-length')
    return new Response(compressStream(coding, response.body), { status: response.status, headers })
  }
  const json = ready ?? new TextEncoder().encode(JSON.stringify(responseValue))
  const headers = { 'content-type': String(set.headers['content-type'] ?? JSON_CONTENT_TYPE) }
  if (json.byteLength < COMPRESS_MIN_BYTES) return ready ? undefined : new Response(json, { status: statusOf(set.status), headers })
  return new Response(compressSync(coding, json), { status: statusOf(set.status), headers: { ...headers, 'content-encoding': coding } })
}
