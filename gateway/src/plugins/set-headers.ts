/**
 * Elysia's `set.headers` is a plain object: `Retry-After` and `retry-after` would both be sent.
 * Every plugin merges headers through here, lower-cased, so one name is one header.
 */
export function mergeHeaders(target: Record<string, unknown>, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) target[name.toLowerCase()] = value
}

/**
 * Adds one field name to `Vary` in Elysia's `set.headers` without dropping what another plugin
 * put there (compression varies on Accept-Encoding, CORS on Origin).
 */
export function appendVary(headers: Record<string, unknown>, name: string): void {
  const current = typeof headers.vary === 'string' ? headers.vary : ''
  const names = current.split(',').map((n) => n.trim()).filter(Boolean)
  if (names.some((n) => n === '*' || n.toLowerCase() === name.toLowerCase())) return
  headers.vary = [...names, name].join(', ')
}
