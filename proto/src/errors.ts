import { type Static, Type as T } from '@sinclair/typebox'
import { AppError } from './app-error'

export * from './app-error'

/** One failing item of a batch: its position in the batch (from 0) and why it failed. */
export const BatchItemError = T.Object({
  index: T.Integer({ minimum: 0, description: 'position of the item in the batch, from 0' }),
  error: T.String({ description: 'why this item was refused' }),
})
// Its type is ItemError (app-error.ts): errorBody below compiles only while the two agree.

/** Every error but a batch's item failures: `{"error": "..."}` (docs/decisions.md §8). */
export const ErrorBody = T.Object({ error: T.String({ description: 'what went wrong, for a person to read' }) })
export type ErrorBody = Static<typeof ErrorBody>

/** A batch with invalid items: every failing item is named, and nothing was created. */
export const BatchErrorBody = T.Object({ errors: T.Array(BatchItemError, { minItems: 1 }) })
export type BatchErrorBody = Static<typeof BatchErrorBody>

/**
 * The one content type of every JSON answer over HTTP (docs/decisions.md §8): the API's records,
 * list pages, errors, /docs/json and probes, and the probe listeners of the service processes,
 * compressed or not. Spelt as the CSV exports' `text/csv; charset=utf-8` and HTTP's own examples
 * are; Bun's serialiser writes `application/json;charset=utf-8`, so the gateway sets it itself.
 */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

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
