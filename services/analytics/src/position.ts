import { badCursor } from '@lr/platform/cursor'

/**
 * A scan's place in export order, as text: `<scanned_at>:<tie>`, where `tie` orders scans of
 * the same millisecond (the scan_id, in both stores).
 */
export const positionOf = (scannedAt: number, tie: string | number) => `${scannedAt}:${tie}`

/** Reverses positionOf; anything else is the 400 of a cursor this API did not issue. */
export function parsePosition(position: string): { at: number; tie: string } {
  const match = /^(\d{1,16}):(.{1,200})$/s.exec(position)
  if (!match || !Number.isSafeInteger(+match[1]!)) throw badCursor()
  return { at: +match[1]!, tie: match[2]! }
}

/** The position inside a cursor made by encodeCursor(position); anything else is a 400. */
export function decodeScanCursor(cursor: string): string {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) throw badCursor()
  const position = Buffer.from(cursor, 'base64url').toString('utf8')
  parsePosition(position)
  return position
}
