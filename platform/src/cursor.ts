import { AppError, type Page } from '@lr/proto'

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
