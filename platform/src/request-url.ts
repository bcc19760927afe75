/**
 * The path and query of a request's URL, read from `request.url` by index (every request of the
 * resolver and of the gateway). Bun's request.url is already a serialised URL (dot segments
 * resolved, the query percent-encoded, as `new URL(…).href` gives it), and so is that of
 * `new Request`, so its pieces are those URL would give, without a second parse (0.3 µs a redirect).
 */

/**
 * Where the path of a serialised URL starts: the first `/` after the authority; -1 when it has
 * none. An absolute URL only: the gateway refuses a request without Host first (host-required.ts),
 * and pathAndSearchOf reads a relative one itself.
 */
export const pathStartOf = (href: string): number => href.indexOf('/', href.indexOf('//') + 2)

/** A request's path and query (`search`, as URL's: '' or `?…`). */
export function pathAndSearchOf(href: string): { path: string; search: string } {
  // Relative (no Host): Bun leaves it as sent, dot segments and all; URL serialises it as it would have.
  if (href.charCodeAt(0) === 47) {
    const url = requestUrlOf(href)
    return { path: url.pathname, search: url.search }
  }
  const pathAt = pathStartOf(href)
  if (pathAt < 0) return { path: '/', search: '' }
  const hashAt = href.indexOf('#', pathAt)
  const end = hashAt < 0 ? href.length : hashAt
  const queryAt = href.indexOf('?', pathAt)
  if (queryAt < 0 || queryAt > end) return { path: href.slice(pathAt, end), search: '' }
  return { path: href.slice(pathAt, queryAt), search: end - queryAt > 1 ? href.slice(queryAt, end) : '' }
}

/** A request's URL parsed, relative ones (a request without Host) too, which `new URL` alone refuses. */
export const requestUrlOf = (href: string): URL => new URL(href.charCodeAt(0) === 47 ? `http://host${href}` : href)
