import { Elysia } from 'elysia'
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

/**
 * The only body parser: JSON under 1 MiB. Errors: 415 for another content type, 413 when too
 * large, 400 when empty or malformed. What the JSON must hold is the services' to check.
 */
export const jsonBody = new Elysia({ name: 'json-body' }).onParse({ as: 'global' }, async ({ request, contentType }) => {
  const bytes = await readCapped(request, BODY_LIMIT_BYTES)
  if (bytes.byteLength === 0) {
    // GET and DELETE carry no body; the routes that take one require it.
    if (!BODY_METHODS.has(request.method)) return null
    throw new AppError('bad_request', 'request body is required (JSON)')
  }
  if (!/^application\/json\s*(;|$)/i.test(contentType ?? ''))
    throw new AppError('unsupported_media_type', 'request body must be JSON: send Content-Type: application/json')
  try {
    return JSON.parse(utf8.decode(bytes))
  } catch {
    throw new AppError('bad_request', 'request body is not valid JSON')
  }
})
