import { type Static, Type as T } from '@sinclair/typebox'

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

/** One failing item of a batch: its position in the batch (from 0) and why it failed. */
export const BatchItemError = T.Object({
  index: T.Integer({ minimum: 0, description: 'position of the item in the batch, from 0' }),
  error: T.String({ description: 'why this item was refused' }),
})
export type ItemError = Static<typeof BatchItemError>

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

/** Every error but a batch's item failures: `{"error": "..."}` (docs/decisions.md §8). */
export const ErrorBody = T.Object({ error: T.String({ description: 'what went wrong, for a person to read' }) })
export type ErrorBody = Static<typeof ErrorBody>

/** A batch with invalid items: every failing item is named, and nothing was created. */
export const BatchErrorBody = T.Object({ errors: T.Array(BatchItemError, { minItems: 1 }) })
export type BatchErrorBody = Static<typeof BatchErrorBody>

/** The JSON error body (docs/decisions.md §8): `{"error"}`, or `{"errors": [{index, error}]}` for a batch. */
export function errorBody(error: AppError): ErrorBody | BatchErrorBody {
  return error.details?.items ? { errors: error.details.items } : { error: error.message }
}

/**
 * What a store adapter throws when a unique key refuses a write, whatever the driver (SQLite's
 * constraint error, Mongo's duplicate key 11000). Adapters throw it; services turn it into an
 * AppError with the words the client should read. `key` names the unique key (`code`,
 * `email`, `idempotency_key`, ...), `value` the value that collided when the adapter knows it.
 */
export class StoreConflict extends Error {
  constructor(
    readonly key: string,
    readonly value?: string,
  ) {
    super(`${key} ${value ?? '(unknown)'} is already taken`)
    this.name = 'StoreConflict'
  }
}
