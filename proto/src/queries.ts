import { Type as T } from '@sinclair/typebox'
import { Day } from './analytics'
import { Status } from './library'
import { LIMIT_DEFAULT, LIMIT_MAX } from './paging'

/**
 * The query strings the list and analytics routes take, as schemas the OpenAPI document lists
 * parameter by parameter. They describe what the services' parsers accept (list-query.ts of
 * @lr/library-records, days.ts of @lr/analytics), which also refuse any other name with a 400.
 */
const ListQueryFields = {
  limit: T.Optional(T.Integer({ minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, description: `records per page, 1 to ${LIMIT_MAX}; a page may hold fewer (it never exceeds one bus message), so page until next_cursor is null`, examples: [100] })),
  cursor: T.Optional(T.String({ description: 'the next_cursor of the previous page, as it came; opaque' })),
  updated_since: T.Optional(T.Integer({ minimum: 0, description: 'epoch seconds: only records whose updated_at is at or after this time', examples: [1735689600] })),
  include_deleted: T.Optional(T.Boolean({ default: false, description: 'true: also list deleted records, as tombstones carrying deleted_at, so an incremental sync (updated_since) sees removals' })),
}

export const StaticListQuery = T.Object(ListQueryFields, { additionalProperties: false })
export const DynamicListQuery = T.Object(
  { ...ListQueryFields, status: T.Optional({ ...Status, description: 'only codes in this status' }) },
  { additionalProperties: false },
)
/** `from` and `to`: UTC days, inclusive, either optional; from after to is a 400. */
export const AnalyticsQuery = T.Object(
  {
    from: T.Optional({ ...Day, description: 'first UTC day counted, YYYY-MM-DD (inclusive)', examples: ['2025-01-01'] }),
    to: T.Optional({ ...Day, description: 'last UTC day counted, YYYY-MM-DD (inclusive)', examples: ['2025-01-31'] }),
  },
  { additionalProperties: false },
)
