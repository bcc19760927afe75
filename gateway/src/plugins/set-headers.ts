/**
 * Elysia's `set.headers` is a plain object: `Retry-After` and `retry-after` would both be sent.
 * Every plugin merges headers through here, lower-cased, so one name is one header.
 */
export function mergeHeaders(target: Record<string, unknown>, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) target[name.toLowerCase()] = value
}
