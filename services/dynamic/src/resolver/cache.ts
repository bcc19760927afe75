import type { ResolveReply, ResolverEntry } from '@lr/proto'
import { type PreparedRule, rulesTargetOf } from './device'
import { type Destination, destinationOf } from './location'
import { type Limits, limitsOf } from './limits'

/**
 * How the resolver answers a scan of one code; `rules` only when the code has device rules,
 * `limits` only for an expiring or capped code.
 */
export type Target = { status: 302; destination: Destination; rules?: readonly PreparedRule[]; limits?: Limits } | { status: 404 } | { status: 410 }

/** A lookup's answer as a Target: unknown or draft 404, soft-deleted 410, active 302. */
export function targetOf(entry: ResolveReply): Target {
  if (entry === null) return { status: 404 }
  if (entry.deleted) return { status: 410 }
  if (entry.status !== 'active') return { status: 404 }
  const limits = limitsOf(entry)
  return { status: 302, destination: destinationOf(entry.destination_url), ...rulesTargetOf(entry), ...(limits && { limits }) }
}

export interface CacheOptions {
  /**
   * Codes kept in memory. Beyond it one is dropped by second chance (CLOCK): the oldest filled,
   * unless it was answered from memory since it was filled or last spared (then it goes to the
   * back, spared once). Default 100 000.
   */
  maxEntries?: number
  /**
   * Age after which a known answer is re-read in the background (still served meanwhile). Not
   * how changes arrive (events do, at once): a safety net for an event that never came (one
   * missed while the bus was disconnected is handled at the reconnect: the resolver forgets all).
   * An answer not re-read for twice as long (a code scanned less often) is looked up before it is
   * served, so that net holds for every scan, not only those after the first one past it.
   */
  refreshMs?: number
  /** Clock in milliseconds. */
  now?: () => number
  /**
   * Called with each code dropped to make room (never one dropped by `forget`, `forgetAll` or
   * `clear`): what the resolver keeps beside a code (a capped code's count) can go with it.
   */
  dropped?: (code: string) => void
}

/** `used`: answered from memory since it was filled or last spared (the CLOCK bit). */
type Entry = { target: Target; at: number; used: boolean }

/**
 * At most this many used codes are spared to make room for one: past it the oldest goes,
 * used or not. A sweep over every code (all used since the last) would hold the thread for
 * milliseconds (100 000 map moves); this bounds one miss's work and still keeps hot codes,
 * which are a small part of a cache that has to drop codes at all.
 */
const MAX_SPARED = 64

/**
 * Code -> Target, in memory. A miss is loaded once however many scans wait for it; `apply`
 * (a change event) replaces a known answer at once and wins over a load still under way.
 */
export function createTargetCache(load: (code: string) => Promise<ResolveReply>, options: CacheOptions = {}) {
  const { maxEntries = 100_000, refreshMs = 60_000, now = Date.now, dropped } = options
  const entries = new Map<string, Entry>()
  const loading = new Map<string, Promise<Target>>()
  /** The answers forgetAll took, and those too old to serve unread: each served only while its code's next load fails. */
  const forgotten = new Map<string, Entry>()

  function remember(code: string, target: Target, at = now()): void {
    entries.delete(code)
    forgotten.delete(code)
    // Room is made before the code goes in: made after, a sweep that spared every other code
    // would reach the new one first and drop it unused.
    if (entries.size + forgotten.size >= maxEntries) makeRoom()
    entries.set(code, { target, at, used: false })
  }

  /**
   * Drops one code: a forgotten answer first (kept only for an outage), else by second chance.
   * Use-based where a first-fill order dropped a code scanned every second as soon as enough
   * other codes had been looked up (a scan of random codes fills the cache with 404s). Its cost
   * is here, on a miss: a hit only sets `used`.
   */
  function makeRoom(): void {
    if (forgotten.size > 0) {
      const code = forgotten.keys().next().value!
      forgotten.delete(code)
      return dropped?.(code)
    }
    for (let spared = 0; entries.size > 0; spared++) {
      const [code, entry] = entries.entries().next().value!
      entries.delete(code)
      if (!entry.used || spared === MAX_SPARED) return dropped?.(code)
      entry.used = false
      entries.set(code, entry)
    }
  }

  function fill(code: string): Promise<Target> {
    const under = loading.get(code)
    if (under) return under
    const promise: Promise<Target> = load(code).then(
      (reply) => {
        // An event arrived while loading: it is newer than this answer.
        if (loading.get(code) !== promise) return entries.get(code)?.target ?? targetOf(reply)
        loading.delete(code)
        const target = targetOf(reply)
        remember(code, target)
        return target
      },
      (error) => {
        if (loading.get(code) !== promise) throw error
        loading.delete(code)
        const old = forgotten.get(code)
        if (!old) throw error
        // Forgotten (or too old), and the service cannot answer now: its last answer, as for any
        // code cached while the service is away, re-read in the background from its next scan on
        // (and waited for again once it is too old).
        remember(code, old.target, now() - refreshMs - 1)
        return old.target
      },
    )
    loading.set(code, promise)
    return promise
  }

  return {
    /** The answer from memory when the code was seen before, else once loaded. */
    lookup(code: string): Target | Promise<Target> {
      const known = entries.get(code)
      if (!known) return fill(code)
      // The CLOCK bit: the only cost of use-based eviction on a hit, one store to the entry just read.
      known.used = true
      const age = now() - known.at
      if (age <= refreshMs) return known.target
      if (age <= 2 * refreshMs) {
        fill(code).catch(() => undefined)
        return known.target
      }
      // Not re-read for two intervals: a change event that never came (a dynamic replica killed
      // between its write and its event) would otherwise reach this scan, however late it comes.
      // Looked up first, as a forgotten code is: its answer kept only while the lookup fails.
      entries.delete(code)
      forgotten.set(code, known)
      return fill(code)
    },

    /** A change event: replaces a known or loading code; others are loaded when first scanned. */
    apply(entry: ResolverEntry): void {
      if (!entries.has(entry.code) && !loading.has(entry.code) && !forgotten.has(entry.code)) return
      loading.delete(entry.code)
      remember(entry.code, targetOf(entry))
    },

    /** Forgets a code: its next scan loads it again. */
    forget(code: string): void {
      entries.delete(code)
      loading.delete(code)
      forgotten.delete(code)
    },

    /**
     * Change events may have been missed (the bus reconnected): the next scan of every code loads
     * it again; while that load fails its last answer is served. Answers how many codes it held.
     */
    forgetAll(): number {
      const held = entries.size
      // Added to those a reconnect before took and no scan has looked up since: replacing them
      // (a link flapping twice) left those codes a 503 while the service is away, not their
      // last answer. entries and forgotten never share a code, so maxEntries still holds.
      for (const [code, entry] of entries) forgotten.set(code, entry)
      entries.clear()
      loading.clear()
      return held
    },

    /** Whether the code is in memory or being loaded (what a count may be kept for). */
    holds: (code: string): boolean => entries.has(code) || loading.has(code) || forgotten.has(code),

    get size() {
      return entries.size
    },

    clear(): void {
      entries.clear()
      loading.clear()
      forgotten.clear()
    },
  }
}
