import { etagOf, ifNoneMatchHits } from '@lr/platform/etag'

/**
 * A record answer (GET, PATCH) with its ETag (docs/decisions.md §4, "Versions"); a GET or HEAD whose
 * If-None-Match names the current tag is 304 with no body, the ETag still set.
 */
export async function tagged(request: Request, set: { headers: Record<string, unknown>; status?: unknown }, answer: Promise<unknown>) {
  const record = await answer
  const etag = etagOf(record)
  set.headers.etag = etag
  const ifNoneMatch = request.headers.get('if-none-match')
  if ((request.method !== 'GET' && request.method !== 'HEAD') || ifNoneMatch === null || !ifNoneMatchHits(ifNoneMatch, etag)) return record
  set.status = 304
  return new Response(null, { status: 304, headers: { etag } })
}
