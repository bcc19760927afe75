import { normaliseEmail } from './rules'

/**
 * `account list`'s cursor: the page's last email, sealed in a form no one types by hand, so that a
 * typo or a value from elsewhere is refused (a bare email was taken as a place in the list and gave
 * a partial listing with exit 0). Not secret: the operator sees every email anyway.
 */
const PREFIX = 'ac1_'

export const accountCursorOf = (email: string) => PREFIX + Buffer.from(email).toString('base64url')

/** The email a cursor holds, or null when it is not one `account list` gave. */
export function emailOfAccountCursor(cursor: string): string | null {
  if (!cursor.startsWith(PREFIX) || !/^[A-Za-z0-9_-]+$/.test(cursor.slice(PREFIX.length))) return null
  const email = Buffer.from(cursor.slice(PREFIX.length), 'base64url').toString()
  return accountCursorOf(email) === cursor && normaliseEmail(email) === email ? email : null
}

export const BAD_ACCOUNT_CURSOR = 'cursor is not a next_cursor of account list: pass it as it was printed, or leave it out for the first page'
