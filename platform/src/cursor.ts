import { createCipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { AppError, type Config, type Page } from '@lr/proto'

/** The 400 for a cursor (or store position) this API did not issue, or issued for another list. */
export const badCursor = () => new AppError('bad_request', 'cursor is not one this API issued')

/**
 * The 400 of a client's cursor that does not open (Cursors.open): forged, altered, of another
 * library, kind or query, or sealed with an earlier CURSOR_SECRET. It says what a cursor
 * continues, since the usual cause is a cursor the client did get from us, sent with another query.
 */
export const LIST_CURSOR_REFUSED = 'cursor is not one this API issued for this list: send it with the query of the page that gave it (the same sort, tag, q, status, pending, updated_since and include_deleted; any limit), or start again without cursor'
const badListCursor = () => new AppError('bad_request', LIST_CURSOR_REFUSED)

/** A list position of the SQLite stores (their seq as hex) back to the seq, or a 400. 13 hex digits reach 2^52. */
export function seqOf(position: string): number {
  if (!/^[0-9a-f]{1,13}$/.test(position)) throw badCursor()
  return Number.parseInt(position, 16)
}

// Internal cursors: between two of our processes only (the gateway and an export, analytics and
// the dynamic directory), never shown to a client. Plain base64url of the position.
export const encodeCursor = (position: string) => Buffer.from(position, 'utf8').toString('base64url')

/** Reverses encodeCursor: the store position inside an internal cursor; anything else is a 400. */
export function decodeCursor(cursor: string): string {
  const position = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : ''
  if (!/^[0-9a-f]{1,40}$/.test(position)) throw badCursor()
  return position
}

/**
 * An export's internal `next_cursor`: the store position, and after a `.` the rows its next chunk
 * starts reading (hex) when fewer than `limit` fit a chunk's bytes (csv-format.ts csvChunkOf).
 */
export function exportCursorOf(chunk: { next: string | null; rows: number }, limit: number): string | null {
  if (chunk.next === null) return null
  return encodeCursor(chunk.rows < limit ? `${chunk.next}.${chunk.rows.toString(16)}` : chunk.next)
}

/** Reverses exportCursorOf: the position, and the rows to start from when it says; anything else is a 400. */
export function decodeExportCursor(cursor: string): { position: string; rows?: number } {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : ''
  const parts = /^([0-9a-f]{1,40})(?:\.([0-9a-f]{1,8}))?$/.exec(text)
  if (!parts) throw badCursor()
  const rows = parts[2] === undefined ? undefined : Number.parseInt(parts[2], 16)
  if (rows === 0) throw badCursor()
  return rows === undefined ? { position: parts[1]! } : { position: parts[1]!, rows }
}

/** The internal `next_cursor` of a page. */
export const nextCursor = (page: Pick<Page<unknown>, 'next'>): string | null => (page.next === null ? null : encodeCursor(page.next))

const TAG_BYTES = 16
// A store position, or a sorted list's `<position>.<sort key>` (@lr/library-records list-order.ts; a 200-character name is at most 1600 hex digits).
const POSITION = /^[0-9a-f]{1,13}(?:\.[0-9a-f]{1,1600})?$/

/**
 * The cursors clients hold (docs/decisions.md §4, "Cursors"): opaque and tamper-evident. A
 * cursor binds a store position to its `scope` (library, kind, listing and its filters, as the
 * caller spells them). The tag is HMAC-SHA256 over scope and position, cut to 128 bits; it is
 * also the IV under which the position is encrypted (AES-256-CTR), so a cursor neither shows
 * the position (a platform-wide row number) nor opens under another scope. Deterministic:
 * the same page gives the same cursor. base64url, 24 to 29 characters (a list sorted
 * by name: up to about 2200, the name travels in it).
 */
export interface Cursors {
  seal(scope: string, position: string): string
  /** The position sealed under exactly this scope; anything else (forged, altered, foreign) is the 400 of LIST_CURSOR_REFUSED. */
  open(scope: string, cursor: string): string
}

export function createCursors(secret: string): Cursors {
  const key = (use: string) => createHmac('sha256', secret).update(use).digest()
  const macKey = key('lr cursor tag')
  const encKey = key('lr cursor encryption')
  const tagOf = (scope: string, position: string) =>
    createHmac('sha256', macKey).update(scope).update('\0').update(position).digest().subarray(0, TAG_BYTES)
  const crypt = (iv: Buffer, data: Buffer) => {
    const cipher = createCipheriv('aes-256-ctr', encKey, iv)
    return Buffer.concat([cipher.update(data), cipher.final()])
  }

  return {
    seal(scope, position) {
      const tag = tagOf(scope, position)
      return Buffer.concat([tag, crypt(tag, Buffer.from(position, 'utf8'))]).toString('base64url')
    },
    open(scope, cursor) {
      const raw = /^[A-Za-z0-9_-]{23,2200}$/.test(cursor) ? Buffer.from(cursor, 'base64url') : Buffer.alloc(0)
      // Only the canonical text: base64url ignores stray trailing bits, which would let two texts open alike.
      if (raw.length <= TAG_BYTES || raw.toString('base64url') !== cursor) throw badListCursor()
      const tag = raw.subarray(0, TAG_BYTES)
      const position = crypt(tag, raw.subarray(TAG_BYTES)).toString('latin1')
      if (!POSITION.test(position) || !timingSafeEqual(tag, tagOf(scope, position))) throw badListCursor()
      return position
    },
  }
}

/** Used when CURSOR_SECRET is unset with TRANSPORT=nats: replicas must agree, so it cannot be random. Public: set CURSOR_SECRET. */
export const DEV_CURSOR_SECRET = 'dev-only-cursor-secret-change-me'

/**
 * The cursor key of a process: CURSOR_SECRET; unset, a random key for the one process of
 * TRANSPORT=memory (its cursors end with it), else DEV_CURSOR_SECRET with `warn` called once.
 */
export function cursorSecretOf(config: Pick<Config, 'CURSOR_SECRET' | 'TRANSPORT'>, warn: (message: string) => void): string {
  if (config.CURSOR_SECRET) return config.CURSOR_SECRET
  if (config.TRANSPORT === 'memory') return randomBytes(32).toString('hex')
  warn('CURSOR_SECRET is not set: list cursors use a public development key (readable and forgeable); set CURSOR_SECRET, the same for every replica')
  return DEV_CURSOR_SECRET
}
