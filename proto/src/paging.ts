import { type Static, Type as T } from '@sinclair/typebox'
import { AppError } from './errors'
import { STATUSES, type Status } from './record-fields'

export const LIMIT_DEFAULT = 100
export const LIMIT_MAX = 1000

/** Query string of the list routes, as the gateway forwards it (every value a string). */
export const ListQuery = T.Record(T.String(), T.String())
export type ListQuery = Static<typeof ListQuery>

/** A parsed list request. `after` is the store's position of the last record already seen. */
export interface ListOptions {
  limit: number
  after?: string
  updatedSince?: number
  status?: Status
}

export interface Page<T> {
  items: T[]
  /** Position of the last item when more may follow, else null. */
  next: string | null
}

export const encodeCursor = (position: string) => Buffer.from(position, 'utf8').toString('base64url')

/** The 400 for a cursor (or store position) this API did not issue. */
export const badCursor = () => new AppError('bad_request', 'cursor is not one this API issued')

/** Reverses encodeCursor: the store position inside a cursor; anything else is a 400. */
export function decodeCursor(cursor: string): string {
  const position = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : ''
  if (!/^[0-9a-f]{1,40}$/.test(position)) throw badCursor()
  return position
}

/** The `next_cursor` a list or export answers with for a page. */
export const nextCursor = (page: Page<unknown>): string | null => (page.next === null ? null : encodeCursor(page.next))

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
