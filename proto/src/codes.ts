/** Shape of a code: what the service issues and the only thing the resolver and routes look up. */
export const CODE_PATTERN = /^[0-9A-Za-z]{7,32}$/
/**
 * Words a code must never equal (docs/decisions.md §3): route segments under /dynqrcodes, and the
 * resolver's own paths (/metrics; /healthz for symmetry with the API port).
 */
export const ROUTE_WORDS: readonly string[] = ['analytics', 'export', 'batch', 'metrics', 'healthz']

/** True when `code` could have been issued: the right shape and not a route word (any case). */
export const isIssuableCode = (code: string) => CODE_PATTERN.test(code) && !ROUTE_WORDS.includes(code.toLowerCase())
