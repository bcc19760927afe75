// Only light modules at run time (the contracts' index and prom-client are types or absent): a
// resolver thread loads this file, and every module a thread loads is resident in its own heap
// (./thread.ts). What needs the bus is in ./bus-feed.ts.
import { AppError } from '@lr/proto/app-error'
import { isIssuableCode } from '@lr/proto/codes'
import type { Config, ResolveReply, ResolverEntry, ScanEvent } from '@lr/proto'
import { errorFields, log } from '@lr/platform/log'
import { atMostEvery } from '@lr/platform/log-throttle'
import { pathAndSearchOf } from '@lr/platform/request-url'
import { isBot } from './bots'
import { type CacheOptions, createTargetCache, type Target } from './cache'
import { type AddressSource, clientAddress, preloadGeoIp } from './country'
import { destinationFor } from './device'
import { NO_STORE, redirectTo } from './location'
import { answerLimited, createScanCounts, type LimitedDeps, type ScanCounts } from './limits'
import { scanEventOf, type ScanSettings } from './scan'

/**
 * Where a resolver reads a code it does not know and hears of every change: the bus, or (a
 * resolver thread, ./threads.ts) the thread that holds the bus.
 */
export interface ResolverFeed {
  lookup(code: string): Promise<ResolveReply>
  /**
   * Calls `changed` with every change event (DYNAMIC_CHANGED_ALL), checked; returns a stop. A
   * promise `changed` returns is the event's handling (a publish `settled` waits for it).
   */
  follow(changed: (entry: ResolverEntry) => void | Promise<void>): () => void
  /**
   * Calls `forget` whenever change events may have been missed (the bus reconnected after a
   * disconnect): every cached answer may be stale. `forget` answers how many codes it forgot (the
   * feed logs it). Returns a stop. Absent: the feed never misses one (the in-process bus).
   */
  resumed?(forget: () => number | Promise<number>): () => void
}

export interface ResolverDeps extends ScanSettings {
  /** Lookups and change events: createBusFeed (./bus-feed.ts), or a resolver thread's main thread. */
  feed: ResolverFeed
  /** SHORT_BASE_URL: a path it carries (`https://s.example/go`) may prefix every code. */
  shortBaseUrl?: string
  /** Clock in epoch milliseconds (scan time, cache age). */
  now?: () => number
  cache?: Omit<CacheOptions, 'now' | 'dropped'>
  /** Capped codes' counts; default one of its own (createScanCounts). Resolver threads share theirs. */
  counts?: ScanCounts
  /**
   * Hands a counted scan on; must not block or throw: a ScanPublisher's `publish` (the JetStream
   * one in the resolver process with TRANSPORT=nats, the bus's in one process).
   */
  publishScan: (event: ScanEvent) => void
}

export type { AddressSource } from './country'

/** A scan of an expiring or capped code, as answerLimited hands it back to be published. */
type LimitedScan = { request: Request; userAgent: string; code: string; server: AddressSource | undefined }

export interface Resolver {
  /**
   * The answer to one request: a Response at once for a code this resolver knows (most), a
   * promise only while it looks one up. Bun.serve sends an answer given at once without a
   * promise's turn (a bare server: 167k against 153k redirects/s through two async functions).
   */
  fetch(request: Request, server?: AddressSource): Response | Promise<Response>
  /** Whether the code is cached or being looked up: its count (if capped) is still wanted. */
  holds(code: string): boolean
  /**
   * Lets go of the counts of codes the cache does not hold (a lookup a change event superseded
   * seeds one that no cache entry takes). Run every COUNTS_SWEEP_DROPS drops, and by a resolver
   * thread before it answers a sweep of the shared count slots (./thread.ts).
   */
  dropUnheldCounts(): void
  /** Stops following change events and forgets every cached code. */
  stop(): void
}

const text = (status: number, body: string, extra: Record<string, string> = {}) =>
  new Response(body, { status, headers: { ...NO_STORE, 'content-type': 'text/plain; charset=utf-8', ...extra } })
const ANSWERS = {
  404: () => text(404, 'Not found: no such short link.\n'),
  410: () => text(410, 'Gone: this short link was deleted.\n'),
}
/** Cache drops between two sweeps of the counts of codes the cache does not hold (droppedFromCache). */
export const COUNTS_SWEEP_DROPS = 4096
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** What a resolver takes from config (also what a resolver thread is started with). */
export type ResolverSettings = Pick<ResolverDeps, 'shortBaseUrl' | 'trustProxy' | 'visitorHashKey' | 'cache'>

export const resolverSettingsOf = (config: Config): ResolverSettings => ({
  shortBaseUrl: config.SHORT_BASE_URL,
  trustProxy: config.TRUST_PROXY,
  visitorHashKey: config.VISITOR_HASH_KEY,
})

/**
 * The short-link resolver (docs/decisions.md §5): GET/HEAD /{code} (or /{code}/) -> 302 to the destination, 404
 * unknown or draft, 410 deleted. Answers from memory for a code it has seen; change events keep
 * that memory current. A counted scan (GET, not a bot) is published after the answer is built,
 * never awaited.
 */
export function createResolver(deps: ResolverDeps): Resolver {
  const { feed, now = Date.now } = deps
  const handOn = deps.publishScan
  const failedLookupLine = atMostEvery(10_000)
  const prefix = deps.shortBaseUrl ? new URL(deps.shortBaseUrl).pathname.replace(/\/$/, '') : ''
  // One trailing slash is taken (`/AbCd1234/`): people type one after a printed link and some
  // linkifiers add one, and a 404 there reads as a dead link (Shlink has a setting for it). The
  // same one regex match as before, so a redirect pays nothing for it.
  const codePath = new RegExp(`^(?:${escapeRegExp(prefix)})?/([0-9A-Za-z]+)/?$`)
  const counts = deps.counts ?? createScanCounts()
  // A capped code's count goes with its cache entry (dropped for room: not scanned while the
  // cache took in many others) and comes back with its next lookup, as after a restart; kept
  // after that, the counts grew by one per capped code ever scanned until the process stopped.
  const cache = createTargetCache((code) => feed.lookup(code).then(seeded), { ...deps.cache, now, dropped: droppedFromCache })
  let drops = 0
  const unsubscribe = feed.follow(changed)
  // Change events may have been missed: every cached code is looked up again at its next scan,
  // not served stale until its background re-read. Capped codes' counts stay: they are counts of
  // scans, not answers, and a lookup only ever raises them.
  const unresumed = feed.resumed?.(() => cache.forgetAll())

  // The embedded GeoIP database is read now rather than by the first scan.
  preloadGeoIp()

  /** `userAgent`: the request's, read once by `answer`. */
  function publishScan(request: Request, userAgent: string, code: string, server: AddressSource | undefined, outcome?: 'fallback'): void {
    try {
      const event = scanEventOf(request, userAgent, code, clientAddress(request, server, deps.trustProxy), now(), deps)
      if (outcome) event.outcome = outcome
      handOn(event)
    } catch (error) {
      log().error(errorFields(error), 'scan not published')
    }
  }

  /**
   * A code the cache dropped for room takes its count along. Every COUNTS_SWEEP_DROPS drops (on a
   * miss, amortised: never a redirect's cost) the counts of codes the cache does not hold go too:
   * a lookup a change event superseded (a scan racing its code's capping) seeds a count that no
   * cache entry takes, and so no drop would ever reach.
   */
  function droppedFromCache(code: string): void {
    counts.drop(code)
    if (++drops % COUNTS_SWEEP_DROPS === 0) dropUnheldCounts()
  }
  function dropUnheldCounts(): void {
    for (const counted of counts.codes()) if (!cache.holds(counted)) counts.drop(counted)
  }

  /** A capped code's lookup carries its counted scans: our count starts there (never goes down). */
  function seeded(reply: ResolveReply): ResolveReply {
    if (reply?.scans !== undefined) counts.seed(reply.code, reply.scans)
    return reply
  }

  /** A change event; one that makes a code capped before we know its count is loaded again instead (the lookup brings the count). */
  function changed(entry: ResolverEntry): void {
    if (entry.max_scans !== undefined && !counts.has(entry.code)) cache.forget(entry.code)
    else cache.apply(entry)
  }

  function fetch(request: Request, server?: AddressSource): Response | Promise<Response> {
    if (request.method !== 'GET' && request.method !== 'HEAD') return text(405, 'Method not allowed.\n', { allow: 'GET, HEAD' })
    const url = pathAndSearchOf(request.url)
    const code = codePath.exec(url.path)?.[1]
    // Malformed paths never reach the store.
    if (!code || !isIssuableCode(code)) return ANSWERS[404]()
    let known: Target | Promise<Target>
    try {
      known = cache.lookup(code)
    } catch (error) {
      return unavailable(code, error)
    }
    if (known instanceof Promise) return known.then((target) => answer(request, server, url, code, target), (error) => unavailable(code, error))
    return answer(request, server, url, code, known)
  }

  function unavailable(code: string, error: unknown): Response {
    const expected = error instanceof AppError
    // As every line about an error, under `err` (README "Logs and metrics"): it had been a bare
    // `error` text, which a query on err.message or err.code missed. A known outage (an AppError:
    // unavailable, timeout) needs no stack.
    const { err } = errorFields(error)
    if (expected) delete err.stack
    // One line per 10 s while the lookups fail (each 503 is in lr_http_requests_total): every
    // scan of a code not in memory had written its own, a flood at the rate of the scans.
    failedLookupLine((repeated) => log().error({ code, ...(repeated > 0 ? { repeated } : {}), err }, 'resolver lookup failed'))
    // 503 whether the dynamic service is away or hung (its lookup timed out; the log line's
    // err.code tells them apart): to a visitor the resolver is the site itself, not a gateway, and
    // 503 with Retry-After is the answer browsers, scanner apps and CDNs know as "try again
    // shortly" (docs/decisions.md §5). A timeout had been a 504, which no doc promised.
    return text(503, 'Temporarily unavailable, please retry.\n', { 'retry-after': '1' })
  }

  function answer(request: Request, server: AddressSource | undefined, url: { search: string }, code: string, target: Target): Response {
    if (target.status !== 302) return ANSWERS[target.status]()
    const userAgent = request.headers.get('user-agent') ?? ''
    const destination = target.rules ? destinationFor(target.destination, target.rules, userAgent) : target.destination
    // A counted scan: a GET by a client that is not a bot.
    const counted = request.method === 'GET' && !isBot(userAgent)
    if (target.limits !== undefined) return answerLimited(limitedDeps, { request, userAgent, code, server }, code, destination, target.limits, url.search, counted)
    const response = redirectTo(destination, url.search)
    if (counted) publishScan(request, userAgent, code, server)
    return response
  }
  /** What an expiring or capped code's answer needs (limits.ts); every other code never uses it. */
  const limitedDeps: LimitedDeps<LimitedScan> = { counts, now, publish: (scan, outcome) => publishScan(scan.request, scan.userAgent, scan.code, scan.server, outcome) }

  return {
    fetch,
    holds: cache.holds,
    dropUnheldCounts,
    stop() {
      unsubscribe()
      unresumed?.()
      cache.clear()
      counts.clear()
    },
  }
}
