import type { ResolverEntry } from '@lr/proto'
import { type Destination, destinationOf, NO_STORE, redirectTo } from './location'

/**
 * An expiring or capped code's limits (README "Expiring and capped codes"), prepared once per
 * cache entry like its destination: a scan compares two numbers and reads a prepared fallback.
 */
export interface Limits {
  /** Epoch milliseconds from which the code is expired; Infinity: never. */
  expiresAtMs: number
  /** Counted scans redirected to the destination before the code is capped; Infinity: no cap. */
  maxScans: number
  /** Where an expired or capped code redirects; null: it answers 410. */
  fallback: Destination | null
}

/** The entry's limits, or undefined when it has neither expires_at nor max_scans (a fallback_url alone waits for one). */
export function limitsOf(entry: ResolverEntry): Limits | undefined {
  if (entry.expires_at === undefined && entry.max_scans === undefined) return undefined
  return {
    expiresAtMs: entry.expires_at === undefined ? Number.POSITIVE_INFINITY : entry.expires_at * 1000,
    maxScans: entry.max_scans ?? Number.POSITIVE_INFINITY,
    fallback: entry.fallback_url === undefined ? null : destinationOf(entry.fallback_url),
  }
}

/**
 * Counted scans of capped codes, as this resolver knows them: seeded from a lookup's count
 * (analytics' exact total, ResolverEntry.scans) and raised by every counted redirect, so that
 * check and increment never interleave with another scan of this process. Adapters:
 * createScanCounts (one thread) and createSharedScanCounts (./shared-counts.ts: every resolver
 * thread of a process counts in the same shared memory).
 */
export interface ScanCounts {
  /** Whether this code's count is known (it was seeded). */
  has(code: string): boolean
  /**
   * A lookup's count. Both it and ours are lower bounds of the true count (ours misses other
   * resolvers' scans, the lookup's those not yet ingested): the larger one is kept.
   */
  seed(code: string, scans: number): void
  /** Counts one scan when the code is under its cap: true; false when capped (nothing counted). */
  take(code: string, max: number): boolean
  capped(code: string, max: number): boolean
  /**
   * Lets a code's count go: its code left the resolver's cache (dropped for room), so no scan
   * reads the count until a lookup brings the code, and its count, back. Without it a count
   * stayed until the process stopped, one per capped code ever scanned.
   */
  drop(code: string): void
  /** How many codes' counts this resolver holds (at most its cache's size, but for codes being looked up). */
  readonly size: number
  /** The codes whose counts it holds (deleting one while walking them is safe). */
  codes(): IterableIterator<string>
  clear(): void
}

/** The counts of one thread's resolver, in a map: synchronous, so exact within the thread. */
export function createScanCounts(): ScanCounts {
  const used = new Map<string, number>()
  return {
    has: (code: string) => used.has(code),
    seed(code: string, scans: number): void {
      if ((used.get(code) ?? -1) < scans) used.set(code, scans)
    },
    take(code: string, max: number): boolean {
      if (max === Number.POSITIVE_INFINITY) return true
      const n = used.get(code) ?? 0
      if (n >= max) return false
      used.set(code, n + 1)
      return true
    },
    capped: (code: string, max: number) => (used.get(code) ?? 0) >= max,
    drop: (code: string) => void used.delete(code),
    codes: () => used.keys(),
    get size() {
      return used.size
    },
    clear: () => used.clear(),
  }
}

export interface LimitedDeps<S> {
  counts: ScanCounts
  /** Clock in epoch milliseconds. */
  now: () => number
  /** Publishes the scan event of a counted request (`scan`: what the caller needs for it), `fallback` when it went to the fallback. */
  publish: (scan: S, outcome?: 'fallback') => void
}

const gone = (why: string) => new Response(`Gone: this short link ${why}.\n`, { status: 410, headers: { ...NO_STORE, 'content-type': 'text/plain; charset=utf-8' } })

/**
 * The answer for a scan of a code with limits. Open: 302 to the destination, counted (GET, not a
 * bot) scans taking one from the cap. Expired or capped: 302 to the fallback (its scan published
 * with outcome `fallback`, never taking from the cap), else 410 as for a deleted code. Bots and
 * HEAD requests get the same answer and count for nothing.
 */
export function answerLimited<S>(deps: LimitedDeps<S>, scan: S, code: string, destination: Destination, limits: Limits, search: string, counted: boolean): Response {
  const expired = deps.now() >= limits.expiresAtMs
  const open = !expired && (counted ? deps.counts.take(code, limits.maxScans) : !deps.counts.capped(code, limits.maxScans))
  if (open) {
    const response = redirectTo(destination, search)
    if (counted) deps.publish(scan)
    return response
  }
  if (limits.fallback === null) return gone(expired ? 'has expired' : 'reached its scan limit')
  const response = redirectTo(limits.fallback, search)
  if (counted) deps.publish(scan, 'fallback')
  return response
}
