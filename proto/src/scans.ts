import { type Static, Type as T } from '@sinclair/typebox'

/** Subject of the event of one counted scan of `code` (api-contract.md §5). */
export const scanSubject = (code: string) => `scans.${code}`
/** Pattern matching every scanSubject. */
export const SCANS_ALL = 'scans.*'

/**
 * Event: one counted scan (a GET of an active code by a client that is not a bot), published by
 * the resolver after it answered. Raw parsing (device, OS, browser, GeoIP) is the consumer's job,
 * so the user agent travels as sent. The client address never travels: only `visitor_id`.
 */
export const ScanEvent = T.Object({
  /** Unique id of this scan (a time-ordered UUIDv7); lets a consumer drop a redelivered event. */
  scan_id: T.String({ minLength: 1 }),
  code: T.String(),
  /** When the resolver answered, in epoch milliseconds (UTC). The API reports epoch seconds. */
  scanned_at: T.Integer({ minimum: 0 }),
  /** The User-Agent header as sent; '' when absent. */
  user_agent: T.String(),
  /** Pseudonymous visitor: hex HMAC-SHA256 of address and user agent under VISITOR_HASH_KEY. */
  visitor_id: T.String({ pattern: '^[0-9a-f]{64}$' }),
  /** ISO 3166-1 alpha-2 (from CF-IPCountry when TRUST_PROXY=1), or `unknown`. */
  country: T.String(),
  /** The Referer header, when sent. */
  referer: T.Optional(T.String()),
})
export type ScanEvent = Static<typeof ScanEvent>
