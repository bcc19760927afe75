import { type Static, Type as T } from '@sinclair/typebox'

/** Subject of the event of one counted scan of `code` (docs/decisions.md §5). */
export const scanSubject = (code: string) => `scans.${code}`
/** Pattern matching every scanSubject. */
export const SCANS_ALL = 'scans.*'

/** The last millisecond of 9999-12-31 UTC, the last day a `YYYY-MM-DD` names. */
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/**
 * Event: one counted scan (a GET of an active code by a client that is not a bot), published by
 * the resolver after it answered. Raw parsing (device, OS, browser, GeoIP) is the consumer's job,
 * so the user agent travels as sent. The client address never travels: only `visitor_id`.
 */
export const ScanEvent = T.Object({
  /** Unique id of this scan (a time-ordered UUIDv7); lets a consumer drop a redelivered event. */
  scan_id: T.String({ minLength: 1 }),
  code: T.String(),
  /**
   * When the resolver answered, in epoch milliseconds (UTC). The API reports epoch seconds. At
   * most the last millisecond of 9999-12-31: a later time has no `YYYY-MM-DD` day to count it on.
   */
  scanned_at: T.Integer({ minimum: 0, maximum: LAST_MS }),
  /** The User-Agent header as sent, its first 1,024 characters; '' when absent. */
  user_agent: T.String(),
  /** Pseudonymous visitor: hex HMAC-SHA256 of address and user agent under VISITOR_HASH_KEY. */
  visitor_id: T.String({ pattern: '^[0-9a-f]{64}$' }),
  /** ISO 3166-1 alpha-2 (from CF-IPCountry when TRUST_PROXY is 1 or more), `XK` (Kosovo), or `unknown`. */
  country: T.String(),
  /** The Referer header, when sent, its first 2,048 characters. */
  referer: T.Optional(T.String()),
  /**
   * `fallback`: the code was expired or capped and the scan went to its fallback_url; analytics
   * counts it apart (breakdown `fallback_scans`), never in the code's totals. Absent: a scan of the destination.
   */
  outcome: T.Optional(T.Literal('fallback')),
})
export type ScanEvent = Static<typeof ScanEvent>

// ScanBatch and its readers live apart, free of TypeBox: a resolver thread builds its batches
// with them and loads no schema (services/dynamic/src/resolver/thread.ts).
export * from './scan-batch'
import type { ScanBatch } from './scan-batch'

/**
 * How the resolver hands a counted scan on (docs/decisions.md §5). Adapters:
 * createBusScanPublisher (one process, the in-process bus) and createJetStreamScanPublisher
 * (TRANSPORT=nats, batches on the SCAN_BATCHES stream; in @lr/platform/scan-stream).
 */
export interface ScanPublisher {
  /** Hands the scan on in the background: never blocks the redirect, never throws. */
  publish(event: ScanEvent): void
  /** Hands on scans already serialised together (a resolver thread's hand-over), as `publish` would each. */
  publishBatch(batch: ScanBatch): void
  /** Resolves once every scan handed over so far was published (or dropped); for shutdown. */
  flush(): Promise<void>
  /** Scans handed over and not yet published. */
  pending(): number
  /** Stops retrying; scans still pending are given up (flush first to keep them). */
  close(): void
}

/**
 * Applies a batch of scan events (raw payloads: the consumer validates them). Resolves once the
 * batch is durably stored; a rejection means nothing of it may be considered applied.
 * `writing`, from a source with one writer at a time (the ingest lease): false once this replica
 * may no longer write (its lease lapsed while it was paused); a store without transactions asks
 * it before each write and stops there, as another replica now applies the same scans.
 */
export type ApplyScans = (events: unknown[], writing?: () => boolean) => Promise<void>

/**
 * ApplyScans for scans still as text: each text a JSON array of scan events (ScanBatch.events),
 * `count` scans in all; a text that is not a JSON array counts as one malformed scan.
 */
export type ApplyScanTexts = (texts: readonly string[], count: number) => Promise<void>

/**
 * Whether any scan of these codes is wanted (a rejection counts as wanted: the batch is then read
 * and applied as usual, and `apply` decides).
 */
export type WantedScans = (codes: readonly string[]) => Promise<boolean>

/**
 * Where a consumer of scans gets them, in batches. Adapters: createBusScanSource (one process,
 * the in-process bus) and createJetStreamScanSource (durable consumer of the SCAN_BATCHES stream, in
 * @lr/platform/scan-stream): each acknowledges a batch only after `apply` resolved.
 */
export interface ScanSource {
  /**
   * Starts delivering; resolves once the subscription is in place. With `wanted`, a source that
   * knows a batch's codes before reading it (a SCAN_BATCHES message names them in a header) asks
   * first, and acknowledges a batch whose codes no one wants without reading or applying it.
   * With `applyTexts`, a source that holds scans as JSON text (the in-process bus's batches)
   * hands the text on unread instead of calling `apply`.
   */
  start(apply: ApplyScans, wanted?: WantedScans, applyTexts?: ApplyScanTexts): Promise<void>
  /**
   * Stops delivering and waits for the batch being applied; what is not applied is left for later
   * (JetStream), or applied first for a bounded time, the rest written to the source's spool on
   * disk for the next start (bus).
   */
  stop(): Promise<void>
}
