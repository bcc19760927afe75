import { AppError, DynamicListQuery, decodeQuery, LIMIT_DEFAULT, type ListOptions, type ListQuery, StaticListQuery } from '@lr/proto'
import type { Static } from '@sinclair/typebox'
import { listFiltersOf } from './list-filters'

/**
 * A parsed list query. `changes`: the list of changes (updated_since or include_deleted given),
 * in order of last change; else the list by insertion. `cursor` is still sealed, and `scope`
 * is what it must be sealed under: the listing and its filters, so a cursor continues only the
 * query it came from (any `limit`).
 */
export interface ParsedListQuery {
  options: ListOptions
  changes: boolean
  cursor?: string
  scope: string
}

/** Reads a list query by its schema (StaticListQuery, or DynamicListQuery when `status` is allowed); any bad name or value is a 400. */
export function parseListQuery(query: ListQuery, allowed: { status: boolean }): ParsedListQuery {
  const q: Static<typeof DynamicListQuery> = decodeQuery(allowed.status ? DynamicListQuery : StaticListQuery, query)
  const options: ListOptions = {
    limit: q.limit ?? LIMIT_DEFAULT,
    ...(q.updated_since !== undefined && { updatedSince: q.updated_since }),
    ...(q.include_deleted !== undefined && { includeDeleted: q.include_deleted }),
    ...(q.status !== undefined && { status: q.status }),
    ...(q.pending !== undefined && { pending: q.pending }),
  }
  const changes = options.updatedSince !== undefined || options.includeDeleted === true
  const filters = listFiltersOf(q)
  // status and pending too: a change feed filtered by them would never report a code that left
  // the filter (active to draft, a pending change approved), and a mirror would keep it for ever.
  if (changes && (filters || options.status !== undefined || options.pending !== undefined))
    throw new AppError('bad_request', `${allowed.status ? 'sort, tag, q, status and pending apply' : 'sort, tag and q apply'} to the list, not to the list of changes (updated_since, include_deleted): leave them out or drop updated_since and include_deleted`)
  Object.assign(options, filters?.options)
  const scope = [changes ? 'changes' : 'list', options.updatedSince ?? '', options.includeDeleted ? 'deleted' : '', options.status ?? ''].join('|')
    // Only a filtered listing's scope grows: cursors of the others stay as they were.
    + (options.pending === undefined ? '' : `|pending=${options.pending}`)
    + (filters?.scope ?? '')
  return { options, changes, scope, ...(q.cursor !== undefined && { cursor: q.cursor }) }
}
