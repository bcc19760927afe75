import { describe, expect, it } from 'bun:test'
import { AppError } from '@lr/proto'
import { createCursors, cursorSecretOf, DEV_CURSOR_SECRET } from '../src/cursor'

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
const BAD = ['bad_request', 'cursor is not one this API issued']

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
