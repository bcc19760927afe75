/**
 * The Location header for a destination: its URL serialisation (`href`: lower-case scheme and
 * host, punycode, percent-encoded path), which is how destinations are stored
 * (docs/decisions.md §3); a row stored before that rule (say `https:\\evil.example`) is normalised
 * here on its way out. Computed once per cache entry, not per redirect.
 */
export function locationOf(destination: string): string {
  return URL.parse(destination)?.href ?? destination
}

const nameOf = (pair: string) => new URLSearchParams(pair).keys().next().value ?? ''

/**
 * Forwards a scan's query string (`search`, with its `?`) onto the destination
 * (docs/decisions.md §5): each parameter the destination does not already have is appended as
 * sent; on a name clash the destination's own value stays. The fragment stays last.
 */
export function forwardQuery(location: string, search: string): string {
  if (search.length <= 1) return location
  const hashAt = location.indexOf('#')
  const base = hashAt < 0 ? location : location.slice(0, hashAt)
  const hash = hashAt < 0 ? '' : location.slice(hashAt)
  const queryAt = base.indexOf('?')
  const taken = new Set(queryAt < 0 ? [] : new URLSearchParams(base.slice(queryAt + 1)).keys())
  const added = search.slice(1).split('&').filter((pair) => pair !== '' && !taken.has(nameOf(pair)))
  if (added.length === 0) return location
  const joiner = queryAt < 0 ? '?' : /[?&]$/.test(base) ? '' : '&'
  return `${base}${joiner}${added.join('&')}${hash}`
}
