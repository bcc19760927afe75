import { AppError } from '@lr/proto'
import { etagOf, ifMatchHolds, ifNoneMatchHits } from '@lr/platform/etag'

/**
 * A record answer (GET, PATCH) with its ETag (docs/decisions.md §4, "Versions"); a GET or HEAD whose
 * If-None-Match names the current tag is 304 with no body, the ETag still set. A GET or HEAD whose
 * If-Match does not name it is 412, as RFC 9110 §13.1.1 requires of every method (PATCH and DELETE
 * have it checked by the service, against what it stores); it had been answered 200 regardless.
 */
export async function tagged(request: Request, set: { headers: Record<string, unknown>; status?: unknown }, answer: Promise<unknown>) {
  const record = await answer
  const etag = etagOf(record)
  set.headers.etag = etag
  if (request.method !== 'GET' && request.method !== 'HEAD') return record
  const ifMatch = request.headers.get('if-match')
  if (ifMatch !== null && !ifMatchHolds(ifMatch, etag))
    throw new AppError('precondition_failed', 'If-Match does not name the current version of this record (its ETag); GET it again')
  const ifNoneMatch = request.headers.get('if-none-match')
  if (ifNoneMatch === null || !ifNoneMatchHits(ifNoneMatch, etag)) return record
  set.status = 304
  return new Response(null, { status: 304, headers: { etag } })
}
