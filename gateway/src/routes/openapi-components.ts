import { BatchErrorBody, ErrorBody } from '@lr/proto'
import { IDEMPOTENCY_KEY_PATTERN } from '@lr/platform/idempotency'
import { REQUEST_ID_PATTERN } from '../plugins/request-id'

/**
 * The reusable parts of the OpenAPI document: response headers, header parameters and error
 * responses, each written once and referenced by every operation it applies to (openapi.ts).
 * The rules they state are docs/decisions.md §8.
 */

const integer = { type: 'integer' }
const text = { type: 'string' }

export const headers = {
  'X-Request-Id': { description: 'The id of this request in the logs: the one the client sent (1 to 128 of `[A-Za-z0-9_.:-]`), else a new one.', schema: text },
  'X-RateLimit-Limit': { description: 'The daily quota of the key.', schema: integer, example: 2000 },
  'X-RateLimit-Remaining': { description: 'Requests left in today\'s quota.', schema: integer, example: 1999 },
  'X-RateLimit-Reset': { description: 'When the daily quota is whole again: the next 00:00 UTC, epoch seconds.', schema: integer, example: 1735776000 },
  'RateLimit-Policy': { description: 'IETF draft: both policies of the key, `"burst"` (a token bucket: q requests at once, refilled in w seconds at the per-second rate) and `"daily"`.', schema: text, example: '"burst";q=10;w=2, "daily";q=2000;w=86400' },
  RateLimit: { description: 'IETF draft: what is left of each policy (r) and the seconds until it is whole again (t).', schema: text, example: '"burst";r=9;t=1, "daily";r=1999;t=43200' },
  'Retry-After': { description: 'Whole seconds to wait before retrying (at least 1).', schema: { type: 'integer', minimum: 1 }, example: 1 },
  ETag: { description: 'The version of the record: send it back in If-None-Match (GET) or If-Match (PATCH).', schema: text, example: '"3f2a9c1e"' },
  Location: { description: 'The URL of the record created.', schema: text, example: '/v1/qrcodes/qr_V1StGXR8Z5jdHi6B' },
  'Content-Disposition': { description: 'The CSV is an attachment, with its file name.', schema: text, example: 'attachment; filename="qrcodes.csv"' },
  Accept: { description: 'On a 415 for the body\'s type or charset: the type that is read.', schema: text, example: 'application/json' },
  'Accept-Encoding': { description: 'On a 415 for a compressed body: the content codings that are read (none but identity).', schema: text, example: 'identity' },
}
type HeaderName = keyof typeof headers

export const headerRefs = (...names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]))

/** What every answer carries; the rate-limit headers once the key is verified (not on a refused key). */
export const LIMIT_HEADERS: HeaderName[] = ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit']

export const parameters = {
  IdempotencyKey: {
    name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN.source },
    description: 'Makes a create safe to retry: the same key and body within 24 hours answer the first response again and create nothing; the same key with another body or route is 422. Keys belong to the API key.',
    example: 'import-2025-01-01-batch-7',
  },
  IfNoneMatch: {
    name: 'If-None-Match', in: 'header', required: false, schema: text,
    description: 'An ETag from an earlier answer: while the record still has it, the answer is 304 without a body.',
  },
  IfMatch: {
    name: 'If-Match', in: 'header', required: false, schema: text,
    description: 'The ETag a request is based on: when the record has changed since, the answer is 412 (a PATCH or DELETE then changes nothing).',
  },
  RequestId: {
    name: 'X-Request-Id', in: 'header', required: false, schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source },
    description: 'Your id for this request; it is echoed and written in every log line about it.',
  },
}
export type ParameterName = keyof typeof parameters

/** Named examples as OpenAPI writes them: name -> { value }. */
export const exampleMap = (examples: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(examples).map(([name, value]) => [name, { value }]))

const json = (schema: unknown, examples: Record<string, unknown>) => ({ 'application/json': { schema, examples: exampleMap(examples) } })
const error = (description: string, example: string, names: HeaderName[] = LIMIT_HEADERS) => ({
  description,
  headers: headerRefs(...names),
  content: json(ErrorBody, { error: { error: example } }),
})

export const responses = {
  NotModified: { description: 'The record still has the ETag sent in If-None-Match; no body.', headers: headerRefs(...LIMIT_HEADERS, 'ETag') },
  BadRequest: error('A bad query parameter, body or header; the message names it.', 'limit must be an integer from 1 to 1000'),
  BadBatch: {
    description: 'The batch itself is malformed (`{"error"}`: empty, not an array, over 50 items), or some items are invalid (`{"errors"}`, every failing item named). Nothing was created.',
    headers: headerRefs(...LIMIT_HEADERS),
    content: json({ oneOf: [ErrorBody, BatchErrorBody] }, {
      items: { errors: [{ index: 1, error: 'url must be an absolute http or https URL with a host' }, { index: 3, error: 'name is required' }] },
      envelope: { error: 'a batch holds at most 50 items; this one has 51' },
    }),
  },
  Forbidden: error('No key, an invalid or revoked key, a key not active yet (with Retry-After), an account without API access, or a change the key may not make (a writer approving a draft).', 'missing API key: send it in the x-api-key header', [...LIMIT_HEADERS, 'Retry-After']),
  NotFound: error('No such record in this key\'s library.', 'no QR code "qr_V1StGXR8Z5jdHi6B" in this library'),
  Conflict: error('The request does not fit the record\'s state: a review of a code with no pending change, or in a personal library.', 'this code has no pending change to review'),
  PreconditionFailed: error('If-Match names another version of the record; a PATCH or DELETE changed nothing.', 'the record has changed since the ETag sent in If-Match'),
  PayloadTooLarge: error('The body is larger than 1 MiB.', 'request body is larger than 1048576 bytes'),
  UnsupportedMediaType: error('The body is not sent as application/json, names a charset other than UTF-8, or is compressed (a Content-Encoding other than identity).', 'request body must be JSON: send Content-Type: application/json', [...LIMIT_HEADERS, 'Accept', 'Accept-Encoding']),
  IdempotencyConflict: error('This Idempotency-Key was used with another body or route.', 'this Idempotency-Key was already used with a different request'),
  RateLimited: error('The per-second rate (with its burst) or the daily quota of the key is used up; the message says which. Consumes nothing.', 'rate limit exceeded: at most 5 requests per second (burst 10); retry after 1 s', [...LIMIT_HEADERS, 'Retry-After']),
  Unavailable: error('A service behind the gateway cannot be reached; retry shortly.', 'the service is temporarily unavailable, please retry shortly', [...LIMIT_HEADERS, 'Retry-After']),
  Timeout: error('A service behind the gateway did not answer in time; retry shortly.', 'the service did not answer in time, please retry shortly', [...LIMIT_HEADERS, 'Retry-After']),
}
export type ResponseName = keyof typeof responses

export const securitySchemes = {
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The key decides the library: `lrp_...` a personal one, `lrb_...` the team\'s. Made with `bun run admin key create`.' },
}

export const tags = [
  { name: 'Static QR codes', description: 'Records of static QR codes: the URL is printed in the code.' },
  { name: 'Dynamic QR codes', description: 'Records of dynamic QR codes: the code is printed, its short link redirects to destination_url, which can change.' },
  { name: 'Analytics', description: 'Scans of dynamic codes: totals, daily counts, breakdowns and every scan as CSV.' },
  { name: 'Webhooks', description: 'Signed webhooks of the library (Standard Webhooks): record and scan events POSTed to your endpoints, retried for 24 h. Team admins and personal owners only.' },
]
