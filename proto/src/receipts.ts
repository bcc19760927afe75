import { StoreConflict } from './errors'
/** How long a POST's answer is kept for retries with the same Idempotency-Key (docs/decisions.md §8). */
export const IDEMPOTENCY_TTL_S = 24 * 60 * 60

/**
 * The stored answer of one create. It is written in the same transaction as the records it
 * answers for, so a retry can never create them twice, whichever replica it reaches.
 */
export interface Receipt {
  /** The API key's id: keys are per API key, so two libraries never collide. */
  scope: string
  key: string
  /** Route and body of the first request (see fingerprintOf). */
  fingerprint: string
  response: unknown
  created_at: number
}

/** Raised by a store when a receipt with the same scope and key (and not expired) exists. */
export class ReceiptTaken extends StoreConflict {
  constructor(key?: string) {
    super('idempotency_key', key)
    this.name = 'ReceiptTaken'
  }
}

/** The receipt ports a store adds for idempotent creates. */
export interface ReceiptStore {
  /** The receipt of (scope, key) created at or after `since`, or null. */
  findReceipt(scope: string, key: string, since: number): Promise<Receipt | null>
}


/**
 * Which request first used each Idempotency-Key of an API key, one register for every service
 * that creates, so a key answers for one request across routes and services (docs/decisions.md
 * §8). Needed where each service keeps its receipts apart (SQLite: one file per service); on
 * MongoDB every service's receipts share one collection, which already decides.
 * Adapter: sqliteKeyClaims (`@lr/platform/idempotency-sqlite`), opened by openKeyClaims.
 */
export interface KeyClaims {
  /**
   * Claims (scope, key) for `fingerprint` at `at`, unless a claim made at or after `since`
   * holds it. Resolves with the fingerprint of the claim holding it now: this one, or the
   * earlier request's. Committed before the create runs, and never taken back.
   */
  claim(scope: string, key: string, fingerprint: string, at: number, since: number): Promise<string>
}
