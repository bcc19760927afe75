import { Type as T } from '@sinclair/typebox'
import { Day } from './analytics'
import { STATUSES, Status } from './library'
import { LIMIT_DEFAULT, LIMIT_MAX } from './paging'

/**
 * The query strings the list and analytics routes take, as schemas: the OpenAPI document lists
 * them parameter by parameter, and the services read a query with them (decodeQuery), so a name
 * not listed here, or a value its field refuses, is a 400. `errorMessage` is that 400's text.
 */
const ListQueryFields = {
  limit: T.Optional(T.Integer({
    minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT, examples: [100],
    description: `records per page, 1 to ${LIMIT_MAX}; a page may hold fewer (it never exceeds one bus message), so page until next_cursor is null`,
    errorMessage: `limit must be an integer from 1 to ${LIMIT_MAX}`,
  })),
  cursor: T.Optional(T.String({ description: 'the next_cursor of the previous page, as it came; opaque' })),
  updated_since: T.Optional(T.Integer({
    minimum: 0, examples: [1735689600],
    description: 'epoch seconds: only records whose updated_at is at or after this time',
    errorMessage: 'updated_since must be epoch seconds (a non-negative integer)',
  })),
  include_deleted: T.Optional(T.Boolean({
    default: false,
    description: 'true: also list deleted records, as tombstones carrying deleted_at, so an incremental sync (updated_since) sees removals',
    errorMessage: 'include_deleted must be "true" or "false"',
  })),
}

export const StaticListQuery = T.Object(ListQueryFields, { additionalProperties: false })
export const DynamicListQuery = T.Object(
  {
    ...ListQueryFields,
    status: T.Optional({
      ...Status,
      description: 'only codes in this status',
      errorMessage: `status must be ${STATUSES.map((status) => `"${status}"`).join(' or ')}`,
    }),
    pending: T.Optional(T.Boolean({
      examples: [false],
      description: 'true: only codes with a pending change awaiting a team admin\'s review; false: only codes without one; absent: every code',
      errorMessage: 'pending must be "true" or "false"',
    })),
  },
  { additionalProperties: false },
)

const day = (name: string, description: string, example: string) =>
  T.Optional({ ...Day, description, examples: [example], errorMessage: `${name} must be a date YYYY-MM-DD (UTC)` })

/**
 * `from` and `to`: UTC days, inclusive, either optional. What the pattern cannot say, the
 * analytics service checks with the same message: the day exists, and from is not after to.
 */
export const AnalyticsQuery = T.Object(
  {
    from: day('from', 'first UTC day counted, YYYY-MM-DD (inclusive)', '2025-01-01'),
    to: day('to', 'last UTC day counted, YYYY-MM-DD (inclusive)', '2025-01-31'),
  },
  { additionalProperties: false },
)
