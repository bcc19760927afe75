import { createHash } from 'node:crypto'

/**
 * The strong ETag of a record as answered (docs/decisions.md §4, "Versions"): a hash of its
 * JSON, so every change that shows (updated_at has only one-second resolution, two changes in
 * one second do not) gives a new tag. The gateway tags what it sends; the service tags what it
 * stored to check If-Match; both see the same JSON text.
 */
export const etagOf = (representation: unknown): string =>
  `"${createHash('sha256').update(JSON.stringify(representation)).digest('base64url').slice(0, 27)}"`

/** The entity tags of an If-Match / If-None-Match header (RFC 9110 §8.8.3); `*` stays `*`. */
function tagsOf(header: string): string[] {
  return header.trim() === '*' ? ['*'] : (header.match(/(?:W\/)?"[^"]*"/g) ?? [])
}

/** If-Match (strong comparison): `*` or the current tag listed; a weak tag never matches. */
export const ifMatchHolds = (header: string, etag: string): boolean =>
  tagsOf(header).some((tag) => tag === '*' || tag === etag)

/** If-None-Match (weak comparison): true when the client's copy is current, so a GET answers 304. */
export const ifNoneMatchHits = (header: string, etag: string): boolean =>
  tagsOf(header).some((tag) => tag === '*' || tag.replace(/^W\//, '') === etag)
