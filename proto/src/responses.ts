import { type Static, Type as T } from '@sinclair/typebox'
import { Created } from './library'
import { StaticRecord } from './records'
import { DynamicRecord } from './dynamic'

/**
 * Answers the gateway writes for every service, as schemas the OpenAPI document names
 * (`components.schemas`). The error bodies are in errors.ts, beside `errorBody`, which returns them.
 */

/** The answer of a DELETE: the id of the record deleted. */
export const Deleted = T.Object({ deleted: T.String({ description: 'qr_id or code of the deleted record' }) })
export type Deleted = Static<typeof Deleted>

/** The answers of the create routes, one schema object each so the document can name them. */
export const StaticCreated = Created(StaticRecord)
export const DynamicCreated = Created(DynamicRecord)
