import { AppError, LIMIT_DEFAULT, LIMIT_MAX, type ListOptions, type ListQuery, STATUSES, type Status } from '@lr/proto'
import { decodeCursor } from '@lr/platform/cursor'

/** Parses `limit`, `cursor`, `updated_since` and (when allowed) `status`; any bad value is a 400. */
export function parseListQuery(query: ListQuery, allowed: { status: boolean }): ListOptions {
  const known = new Set(['limit', 'cursor', 'updated_since', ...(allowed.status ? ['status'] : [])])
  for (const key of Object.keys(query)) {
    if (!known.has(key)) throw new AppError('bad_request', `unknown query parameter "${key}"`)
  }
  const options: ListOptions = { limit: LIMIT_DEFAULT }
  if (query.limit !== undefined) {
    if (!/^\d{1,4}$/.test(query.limit) || +query.limit < 1 || +query.limit > LIMIT_MAX)
      throw new AppError('bad_request', `limit must be an integer from 1 to ${LIMIT_MAX}`)
    options.limit = +query.limit
  }
  if (query.cursor !== undefined) options.after = decodeCursor(query.cursor)
  if (query.updated_since !== undefined) {
    if (!/^\d{1,12}$/.test(query.updated_since))
      throw new AppError('bad_request', 'updated_since must be epoch seconds (a non-negative integer)')
    options.updatedSince = +query.updated_since
  }
  if (query.status !== undefined) {
    if (!(STATUSES as readonly string[]).includes(query.status))
      throw new AppError('bad_request', 'status must be "active" or "draft"')
    options.status = query.status as Status
  }
  return options
}
