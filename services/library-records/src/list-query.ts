import { AppError, LIMIT_DEFAULT, LIMIT_MAX, type ListOptions, type ListQuery, STATUSES, type Status } from '@lr/proto'

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

const BOOLEAN: Record<string, boolean> = { true: true, false: false }

/** Parses `limit`, `cursor`, `updated_since`, `include_deleted` and (when allowed) `status`; any bad value is a 400. */
export function parseListQuery(query: ListQuery, allowed: { status: boolean }): ParsedListQuery {
  const known = new Set(['limit', 'cursor', 'updated_since', 'include_deleted', ...(allowed.status ? ['status'] : [])])
  for (const key of Object.keys(query)) {
    if (!known.has(key)) throw new AppError('bad_request', `unknown query parameter "${key}"`)
  }
  const options: ListOptions = { limit: LIMIT_DEFAULT }
  if (query.limit !== undefined) {
    if (!/^\d{1,4}$/.test(query.limit) || +query.limit < 1 || +query.limit > LIMIT_MAX)
      throw new AppError('bad_request', `limit must be an integer from 1 to ${LIMIT_MAX}`)
    options.limit = +query.limit
  }
  if (query.updated_since !== undefined) {
    if (!/^\d{1,12}$/.test(query.updated_since))
      throw new AppError('bad_request', 'updated_since must be epoch seconds (a non-negative integer)')
    options.updatedSince = +query.updated_since
  }
  if (query.include_deleted !== undefined) {
    if (!Object.hasOwn(BOOLEAN, query.include_deleted)) throw new AppError('bad_request', 'include_deleted must be "true" or "false"')
    options.includeDeleted = BOOLEAN[query.include_deleted]!
  }
  if (query.status !== undefined) {
    if (!(STATUSES as readonly string[]).includes(query.status))
      throw new AppError('bad_request', 'status must be "active" or "draft"')
    options.status = query.status as Status
  }
  const changes = options.updatedSince !== undefined || options.includeDeleted === true
  const scope = [changes ? 'changes' : 'list', options.updatedSince ?? '', options.includeDeleted ? 'deleted' : '', options.status ?? ''].join('|')
  return { options, changes, scope, ...(query.cursor !== undefined && { cursor: query.cursor }) }
}
