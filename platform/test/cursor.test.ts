import { describe, expect, it } from 'bun:test'
import { AppError } from '@lr/proto'
import { createCursors, cursorSecretOf, decodeExportCursor, DEV_CURSOR_SECRET, encodeCursor, exportCursorOf, LIST_CURSOR_REFUSED } from '../src/cursor'

const SECRET = 'a-test-secret-of-some-length'
const SCOPE = 'acct:a\nrecords\nlist|||'

const refusal = (open: () => string) => {
  try {
    open()
  } catch (error) {
    return error instanceof AppError ? [error.code, error.message] : error
  }
  return 'opened'
}
const BAD = ['bad_request', LIST_CURSOR_REFUSED]

describe('sealed cursors', () => {
  const cursors = createCursors(SECRET)

  it('opens what it sealed under the same scope, deterministically', () => {
    for (const position of ['1', '3f0', 'fffffffffffff']) {
      const cursor = cursors.seal(SCOPE, position)
      expect(cursor).toMatch(/^[A-Za-z0-9_-]{23,40}$/)
      expect(cursors.seal(SCOPE, position)).toBe(cursor)
      expect(cursors.open(SCOPE, cursor)).toBe(position)
    }
  })

  it('does not show the position', () => {
    const cursor = cursors.seal(SCOPE, '3f0')
    expect(Buffer.from(cursor, 'base64url').toString('latin1')).not.toContain('3f0')
  })

  it('refuses a cursor sealed under another scope (library, kind or query)', () => {
    const cursor = cursors.seal(SCOPE, '10')
    for (const scope of ['acct:b\nrecords\nlist|||', 'acct:a\ndynamic\nlist|||', 'acct:a\nrecords\nchanges|0||', 'acct:a\nrecords\nexport'])
      expect(refusal(() => cursors.open(scope, cursor))).toEqual(BAD)
  })

  it('refuses an altered, truncated, forged or differently keyed cursor', () => {
    const cursor = cursors.seal(SCOPE, '10')
    const flipped = Buffer.from(cursor, 'base64url')
    flipped[flipped.length - 1]! ^= 1
    const cases = [
      flipped.toString('base64url'), cursor.slice(0, -1), `${cursor}A`, Buffer.from('10').toString('base64url'), '', '%%%',
      createCursors('another-secret-entirely').seal(SCOPE, '10'),
    ]
    for (const bad of cases) expect(refusal(() => cursors.open(SCOPE, bad))).toEqual(BAD)
  })
})

describe('cursorSecretOf', () => {
  const warnings: string[] = []
  const warn = (message: string) => void warnings.push(message)

  it('takes CURSOR_SECRET when set, without a warning', () => {
    expect(cursorSecretOf({ CURSOR_SECRET: SECRET, TRANSPORT: 'nats' }, warn)).toBe(SECRET)
    expect(warnings).toEqual([])
  })

  it('draws a random key per process with TRANSPORT=memory', () => {
    const [a, b] = [cursorSecretOf({ TRANSPORT: 'memory' }, warn), cursorSecretOf({ TRANSPORT: 'memory' }, warn)]
    expect(a).not.toBe(b)
    expect(a.length).toBeGreaterThanOrEqual(32)
    expect(warnings).toEqual([])
  })

  it('falls back to the shared development key with a warning with TRANSPORT=nats, so replicas agree', () => {
    expect(cursorSecretOf({ TRANSPORT: 'nats' }, warn)).toBe(DEV_CURSOR_SECRET)
    expect(warnings).toEqual([expect.stringContaining('CURSOR_SECRET')])
  })
})

describe('export cursors', () => {
  it('carry the position alone while a chunk reads the full limit, and the rows to start from when fewer fit', () => {
    expect(exportCursorOf({ next: '1f', rows: 1000 }, 1000)).toBe(encodeCursor('1f'))
    expect(decodeExportCursor(exportCursorOf({ next: '1f', rows: 1000 }, 1000)!)).toEqual({ position: '1f' })
    expect(decodeExportCursor(exportCursorOf({ next: '1f', rows: 44 }, 1000)!)).toEqual({ position: '1f', rows: 44 })
    expect(exportCursorOf({ next: null, rows: 44 }, 1000)).toBeNull()
  })

  it('refuse anything else with the 400 of a bad cursor', () => {
    for (const text of ['1f.', '1f.0', '.2c', '1f.2c.1', 'xyz', '1f.123456789', ''])
      expect([text, refusal(() => JSON.stringify(decodeExportCursor(encodeCursor(text))))]).toEqual([text, ['bad_request', 'cursor is not one this API issued']])
    expect(refusal(() => JSON.stringify(decodeExportCursor('!!')))).toEqual(['bad_request', 'cursor is not one this API issued'])
  })
})
