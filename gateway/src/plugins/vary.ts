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
