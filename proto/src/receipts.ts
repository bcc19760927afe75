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

