import { Elysia } from 'elysia'
import { firstInJson } from '@lr/platform/json-walk'
import { AppError } from '@lr/proto'

export const BODY_LIMIT_BYTES = 1024 * 1024
const BODY_METHODS = new Set(['POST', 'PATCH', 'PUT'])
/** One decoder for every body: without `stream` a decode keeps no state between calls. */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Reads at most `limit` bytes of a body; stops reading (413) as soon as it is larger. */
async function readCapped(request: Request, limit: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? NaN)
  if (declared > limit) throw new AppError('payload_too_large', `request body is larger than ${limit} bytes`)
  if (!request.body) return new Uint8Array()
  // A declared length is what HTTP/1.1 framing reads, no more: read it whole, without a stream
  // reader and its promise per chunk (6 % of a create's profile). Chunked bodies are counted.
  if (Number.isSafeInteger(declared)) return await request.bytes()
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > limit) throw new AppError('payload_too_large', `request body is larger than ${limit} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** Deeper than any body a route takes (a batch item's `style` sits at level 3). */
export const MAX_BODY_DEPTH = 64
const DEEPER = `request body nests deeper than ${MAX_BODY_DEPTH} levels`

/**
 * What JSON allows but no route can even read as sent, checked once here for every field (a batch
 * item's too), before any service sees the body:
 * - nesting deeper than MAX_BODY_DEPTH. JSON.parse reads any depth, but every later step that
 *   walks a value recursively (the bus's JSON copy, the schema check, the store) overflows the
 *   stack past about 35,000 levels: a 200 KB body was a 500 and held the API's thread for
 *   seconds;
 * - a number past a double's range (`1e400`): JSON.parse makes it Infinity, which the bus's JSON
 *   writes as null, so no service could tell it from a null sent. A number within range is kept
 *   as the double it reads as (integers past 2^53 round, as in every JavaScript and most JSON
 *   stores; README says so).
 * Text a store cannot keep (U+0000, a lone surrogate) reaches the services, whose body check
 * names the field, and in a batch the item (services/library-records/src/body-check.ts).
 */
function unreadable(body: unknown): string | undefined {
  const problem = firstInJson(body, ({ value, depth }) => {
    if (typeof value === 'number') return Number.isFinite(value) ? undefined : 'holds a number too large for a double (such as 1e400): it would be stored as null'
    if (value !== null && typeof value === 'object' && depth > MAX_BODY_DEPTH) return DEEPER
    return undefined
  })
  if (!problem) return undefined
  // The place of a too deep value is 64 steps long: the depth says enough.
  return problem.reason === DEEPER ? DEEPER : `${problem.place || 'request body'} ${problem.reason}`
}

const READ_TYPE = { accept: 'application/json' }

/**
 * The only body parser: UTF-8 JSON under 1 MiB. Errors: 415 for another content type or charset or a content coding, 413 when too
 * large, 400 when empty, malformed or unreadable (too deep, a number past a double). What the JSON must hold
 * is the services' to check.
 */
export const jsonBody = new Elysia({ name: 'json-body' }).onParse({ as: 'global' }, async ({ request, contentType }) => {
  const bytes = await readCapped(request, BODY_LIMIT_BYTES)
  if (bytes.byteLength === 0) {
    // GET and DELETE carry no body; the routes that take one require it.
    if (!BODY_METHODS.has(request.method)) return null
    throw new AppError('bad_request', 'request body is required (JSON)')
  }
  // A content coding is not undone here (RFC 9110 §15.5.16: 415): a gzip body had been a 400 "not
  // valid JSON" of JSON the client did send, and plain text labelled gzip was read as if unlabelled.
  // Each 415 says in a header what is read, as RFC 7694 §3 (Accept-Encoding) and RFC 9110
  // §15.5.16 (Accept) ask, for clients that pick a coding or a type from the answer.
  const coding = request.headers.get('content-encoding')?.trim()
  if (coding && !/^identity$/i.test(coding))
    throw new AppError('unsupported_media_type', `request body must not be compressed: Content-Encoding ${coding.slice(0, 40)} is not read; send plain JSON`, { headers: { 'accept-encoding': 'identity' } })
  if (!/^application\/json\s*(;|$)/i.test(contentType ?? ''))
    throw new AppError('unsupported_media_type', 'request body must be JSON: send Content-Type: application/json', { headers: READ_TYPE })
  // JSON is UTF-8 (RFC 8259 §8.1). A body declared in another charset was read as UTF-8 and
  // refused as malformed JSON (400), or kept as other text if its bytes happened to decode.
  // Elysia's contentType stops before the parameters: the header says the charset.
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(request.headers.get('content-type')!)?.[1]
  if (charset !== undefined && !/^utf-?8$/i.test(charset))
    throw new AppError('unsupported_media_type', `request body must be UTF-8 JSON: charset=${charset.slice(0, 40)} is not read`, { headers: READ_TYPE })
  let body: unknown
  try {
    body = JSON.parse(utf8.decode(bytes))
  } catch {
    throw new AppError('bad_request', 'request body is not valid JSON')
  }
  const unfit = unreadable(body)
  if (unfit) throw new AppError('bad_request', unfit)
  return body
})
