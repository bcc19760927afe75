import { type Account, controlCharacterProblem, type TeamRole, type Tier } from '@lr/proto'

/** `advanced` and `pro` are the same plan (the product spec names it both ways; docs/decisions.md §2); `basic` has no API access. */
const API_TIERS: ReadonlySet<Tier> = new Set(['advanced', 'pro', 'business'])

/** API access: a paid tier, or a temporary grant that has not expired yet (live while now < until). */
export const hasApiAccess = (account: Account, now: number) =>
  API_TIERS.has(account.tier) || (account.api_grant_until !== null && now < account.api_grant_until)

/** Team roles that may hold, and act with, a business key. */
export const canHoldBusinessKey = (role: TeamRole | undefined): role is 'admin' | 'writer' =>
  role === 'admin' || role === 'writer'

/** Seconds between two writes of a key's last_used_at: one write per request would cost more than it tells. */
export const LAST_USED_EVERY_S = 60

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * Control characters (Unicode Cc: C0, DEL, C1), as every name refuses them (proto's names.ts).
 * Emails refuse them too: the admin command line prints an email as it was given, and a BEL, ESC
 * or line break there would act on the operator's terminal or split a log line.
 */
export const hasControlCharacters = (text: string) => controlCharacterProblem('', text) !== null

/** The email as stored (trimmed, lower case), or null when it is not an address. */
export function normaliseEmail(email: string): string | null {
  const clean = email.trim().toLowerCase()
  return clean.length <= 320 && EMAIL.test(clean) ? clean : null
}

/**
 * A new account's email as stored, or null: an address (normaliseEmail) within the lengths mail can
 * carry (RFC 5321: a local part of 64 octets, a path of 256, so 254 for the address). Looking an
 * account up keeps normaliseEmail's wider bound, so an account made before this rule is still found.
 */
export function newAccountEmail(email: string): string | null {
  const clean = normaliseEmail(email)
  if (clean === null || hasControlCharacters(clean)) return null
  const bytes = Buffer.byteLength(clean)
  return bytes <= 254 && Buffer.byteLength(clean.slice(0, clean.lastIndexOf('@'))) <= 64 ? clean : null
}

/** Why newAccountEmail refused an email. */
export const badEmail = (email: string) =>
  `email ${JSON.stringify(email)} is not a valid address${whyNotAnAddress(email)}`

const whyNotAnAddress = (email: string) => {
  const clean = normaliseEmail(email)
  if (clean === null) return ''
  return hasControlCharacters(clean) ? ' (it holds a control character)' : ' (at most 64 bytes before the @, 254 in all)'
}
