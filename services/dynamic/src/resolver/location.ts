/**
 * A destination ready to redirect to, prepared once per cache entry: its Location (the URL
 * serialisation, `href`: lower-case scheme and host, punycode, percent-encoded path, which is how
 * destinations are stored, docs/decisions.md §3; a row stored before that rule, say
 * `https:\\evil.example`, is normalised here on its way out), and what forwarding a scan's
 * query needs (the part before the fragment, the fragment, the names it already has, the
 * joiner), so a redirect only splits the incoming query.
 */
export interface Destination {
  location: string
  /** The 302's headers when no query is forwarded (most scans): see redirectTo. */
  headers: Headers
  base: string
  hash: string
  taken: ReadonlySet<string>
  joiner: '' | '?' | '&'
}

/** Every answer of the resolver: a scan is counted only when it reaches us, never from a cache. */
export const NO_STORE = { 'cache-control': 'private, no-store' } as const

export function locationOf(destination: string): string {
  return URL.parse(destination)?.href ?? destination
}

export function destinationOf(destinationUrl: string): Destination {
  const location = locationOf(destinationUrl)
  const hashAt = location.indexOf('#')
  const base = hashAt < 0 ? location : location.slice(0, hashAt)
  const queryAt = base.indexOf('?')
  return {
    location,
    headers: new Headers({ ...NO_STORE, location }),
    base,
    hash: hashAt < 0 ? '' : location.slice(hashAt),
    taken: new Set(queryAt < 0 ? [] : new URLSearchParams(base.slice(queryAt + 1)).keys()),
    joiner: queryAt < 0 ? '?' : /[?&]$/.test(base) ? '' : '&',
  }
}

/** A query pair's name, decoded as URLSearchParams would (`+` is a space). */
function nameOf(pair: string): string {
  const eq = pair.indexOf('=')
  const raw = (eq < 0 ? pair : pair.slice(0, eq)).replaceAll('+', ' ')
  try {
    return decodeURIComponent(raw)
  } catch {
    return new URLSearchParams(pair).keys().next().value ?? ''
  }
}

/**
 * Forwards a scan's query string (`search`, with its `?`) onto the destination
 * (docs/decisions.md §5): each parameter the destination does not already have is appended as
 * sent; on a name clash the destination's own value stays. The fragment stays last.
 */
export function forwardQuery(destination: Destination, search: string): string {
  if (search.length <= 1) return destination.location
  const added = search.slice(1).split('&').filter((pair) => pair !== '' && !destination.taken.has(nameOf(pair)))
  if (added.length === 0) return destination.location
  return `${destination.base}${destination.joiner}${added.join('&')}${destination.hash}`
}

/**
 * The 302 of a scan to `destination`, its query forwarded. Without a query to forward, the
 * destination's own Headers: Bun copies a Headers into a Response faster than it reads a plain
 * object's (0.6 µs a redirect, bench/ANALYSIS.md, sixteenth session); the copy also keeps a
 * response's changes off the shared one.
 */
export function redirectTo(destination: Destination, search: string): Response {
  const location = forwardQuery(destination, search)
  return new Response(null, { status: 302, headers: location === destination.location ? destination.headers : { ...NO_STORE, location } })
}
