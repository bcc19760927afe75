import type { Account, TeamRole, Tier } from '@lr/proto'

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

/** The email as stored (trimmed, lower case), or null when it is not an address. */
export function normaliseEmail(email: string): string | null {
  const clean = email.trim().toLowerCase()
  return clean.length <= 320 && EMAIL.test(clean) ? clean : null
}
