// No TypeBox here: a resolver thread loads this file, and every module a thread loads is
// resident in its own heap (services/dynamic/src/resolver/thread.ts).

/**
 * The one error type of the product and its one status table.
 * Services throw AppError; the bus carries it as a WireError; the gateway's error handler
 * writes the JSON error body (docs/decisions.md §8) with the status from ERROR_STATUS.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  batch_invalid: 400,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  gone: 410,
  /** The request does not fit the record's state (a review with no pending change, or in a personal library). */
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  /** If-Match named a version the record no longer has (PATCH, DELETE): nothing was changed. */
  precondition_failed: 412,
  idempotency_conflict: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
  timeout: 504,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** One failing item of a batch: its position in the batch (from 0) and why it failed (schema: BatchItemError). */
export interface ItemError {
  index: number
  error: string
}

export interface ErrorDetails {
  /** Per-item failures of a batch (code `batch_invalid`). */
  items?: ItemError[]
  /** Whole seconds the client should wait (403 not-yet-active, 429). */
  retryAfter?: number
  /** Extra response headers, e.g. rate-limit headers on a 429. */
  headers?: Record<string, string>
}

/** What travels on the bus when a handler fails. */
export interface WireError {
  code: ErrorCode
  message: string
  details?: ErrorDetails
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
  ) {
    super(message)
    this.name = 'AppError'
  }

  get status(): number {
    return ERROR_STATUS[this.code]
  }

  toWire(): WireError {
    return { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) }
  }

  static fromWire(wire: WireError): AppError {
    const code = wire.code in ERROR_STATUS ? wire.code : 'internal'
    return new AppError(code, wire.message, wire.details)
  }

  static batch(items: ItemError[]): AppError {
    return new AppError('batch_invalid', 'one or more items are invalid', { items })
  }
}

/** Turns anything thrown into an AppError; unknown failures become `internal` without leaking details. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error
  return new AppError('internal', 'internal error')
}
