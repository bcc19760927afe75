import type { RedirectOs, ResolverEntry } from '@lr/proto'
import { type Destination, destinationOf } from './location'

/**
 * The OS a scan comes from, read from its User-Agent (docs/decisions.md, "Device rules"), tested
 * in this order because the tokens overlap: iPhone/iPad/iPod -> ios (their UA says "like Mac OS
 * X"), Android -> android (its UA says "Linux"), Windows -> windows, Macintosh/Mac OS X -> macos,
 * Linux/X11/CrOS -> linux. Since iPadOS 13 Safari asks for desktop sites with a Macintosh UA:
 * such an iPad reads as macos, as it does to every server. Compiled once; run only for codes
 * with rules.
 */
const OS_PATTERNS: readonly [RedirectOs, RegExp][] = [
  ['ios', /iPhone|iPad|iPod/],
  ['android', /Android/],
  ['windows', /Windows/],
  ['macos', /Macintosh|Mac OS X/],
  ['linux', /Linux|X11|CrOS/],
]

/** The OS of a User-Agent, or null when none is recognised (no rule matches then). */
export function osOf(userAgent: string): RedirectOs | null {
  for (const [os, pattern] of OS_PATTERNS) if (pattern.test(userAgent)) return os
  return null
}

/** A device rule with its destination prepared once per cache entry, like the code's own. */
export interface PreparedRule {
  os: RedirectOs
  destination: Destination
}

/** The entry's approved rules, prepared: `{ rules }` when it has some, else nothing (the target stays as lean as before). */
export function rulesTargetOf(entry: ResolverEntry): { rules?: readonly PreparedRule[] } {
  const rules = entry.redirect_rules
  return rules?.length ? { rules: rules.map((rule) => ({ os: rule.os, destination: destinationOf(rule.destination_url) })) } : {}
}

/** Where a scan of a code with rules goes: the first rule naming the scan's OS, else the code's destination. */
export function destinationFor(fallback: Destination, rules: readonly PreparedRule[], userAgent: string): Destination {
  const os = osOf(userAgent)
  if (os === null) return fallback
  return rules.find((rule) => rule.os === os)?.destination ?? fallback
}
