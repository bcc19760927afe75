import { type Static, Type as T } from '@sinclair/typebox'
import { Created } from './library'
import type { ItemError } from './errors'
import { StaticRecord } from './records'
import { DynamicRecord } from './dynamic'

/**
 * Answers the gateway writes for every service, as schemas: the OpenAPI document names them
 * (`components.schemas`), and the types below are checked against what `errorBody` returns.
 */

/** Every error but a batch's item failures: `{"error": "..."}` (docs/decisions.md §8). */
export const ErrorBody = T.Object({ error: T.String({ description: 'what went wrong, for a person to read' }) })
export type ErrorBody = Static<typeof ErrorBody>

/** One failing item of a batch: its position in the batch (from 0) and why it failed. */
export const BatchItemError = T.Object({
  index: T.Integer({ minimum: 0, description: 'position of the item in the batch, from 0' }),
  error: T.String({ description: 'why this item was refused' }),
})
/** A batch with invalid items: every failing item is named, and nothing was created. */
export const BatchErrorBody = T.Object({ errors: T.Array(BatchItemError, { minItems: 1 }) })
export type BatchErrorBody = Static<typeof BatchErrorBody>

// The schema and the ItemError the services throw must stay one shape (checked by tsc).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const itemShape: Same<ItemError, Static<typeof BatchItemError>> = true
void itemShape

/** The answer of a DELETE: the id of the record deleted. */
export const Deleted = T.Object({ deleted: T.String({ description: 'qr_id or code of the deleted record' }) })
export type Deleted = Static<typeof Deleted>

/** The answers of the create routes, one schema object each so the document can name them. */
export const StaticCreated = Created(StaticRecord)
export const DynamicCreated = Created(DynamicRecord)
