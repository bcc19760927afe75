import { Type as T } from '@sinclair/typebox'
import { Day } from './analytics'
import { STATUSES, Status, Tag, TAG_RULE, TAGS_MAX } from './library'
import { LIMIT_DEFAULT, LIMIT_MAX, LIST_SORTS } from './paging'

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

/** Longest `q`, in characters (code points, as the document's maxLength counts; an emoji is 1). */
export const SEARCH_MAX = 100
const ONLY_LIST = 'not with updated_since or include_deleted (the list of changes has its own order and no filters)'

/** Filters and order of the list (docs/decisions.md "Tags, search and sort"); not for the list of changes. */
const ListFilterFields = {
  sort: T.Optional(T.Union(LIST_SORTS.map((sort) => T.Literal(sort)), {
    examples: ['-created_at'],
    description: `order of the list; default: insertion order (oldest first, as created_at). \`name\` is by Unicode code point, case-sensitive. Ties by insertion, in the sort's direction; ${ONLY_LIST}`,
    errorMessage: `sort must be one of ${LIST_SORTS.join(', ')}`,
  })),
  tag: T.Optional(T.Array(Tag, {
    maxItems: TAGS_MAX, examples: [['print']],
    description: `repeatable (\`tag=a&tag=b\`): only records carrying every tag given, matched case-insensitively; at most ${TAGS_MAX}; ${ONLY_LIST}`,
    errorMessage: `tag: ${TAG_RULE}; at most ${TAGS_MAX} tag parameters`,
  })),
  q: T.Optional(T.String({
    minLength: 1, maxLength: SEARCH_MAX, examples: ['example'],
    description: `only records whose name or URL contains this text; ASCII letters match either case, any other character exactly. 1 to ${SEARCH_MAX} characters (Unicode code points); ${ONLY_LIST}`,
    errorMessage: `q must be 1 to ${SEARCH_MAX} characters`,
  })),
}

export const StaticListQuery = T.Object({ ...ListQueryFields, ...ListFilterFields }, { additionalProperties: false })
export const DynamicListQuery = T.Object(
  {
    ...ListQueryFields,
    status: T.Optional({
      ...Status,
      description: `only codes in this status; ${ONLY_LIST}`,
      errorMessage: `status must be ${STATUSES.map((status) => `"${status}"`).join(' or ')}`,
    }),
    pending: T.Optional(T.Boolean({
      examples: [false],
      description: `true: only codes with a pending change awaiting a team admin's review; false: only codes without one; absent: every code; ${ONLY_LIST}`,
      errorMessage: 'pending must be "true" or "false"',
    })),
    ...ListFilterFields,
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
