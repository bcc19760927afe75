import { describe, expect, it } from 'bun:test'
import { decodeQuery } from '../src/decode'
import { AppError } from '../src/errors'
import { AnalyticsQuery, DynamicListQuery, StaticListQuery } from '../src/queries'

/** The 400 message decodeQuery throws, or the decoded query. */
function read(schema: Parameters<typeof decodeQuery>[0], query: Record<string, string | string[]>): unknown {
  try {
    return decodeQuery(schema, query)
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).code).toBe('bad_request')
    return (error as AppError).message
  }
}

describe('decodeQuery', () => {
  it('converts each value by its field: integers, booleans, strings and literals', () => {
    expect(read(DynamicListQuery, { limit: '25', updated_since: '0', include_deleted: 'false', cursor: 'abc', status: 'draft' }))
      .toEqual({ limit: 25, updated_since: 0, include_deleted: false, cursor: 'abc', status: 'draft' })
  })

  it('leaves absent names absent (no defaults)', () => {
    expect(read(StaticListQuery, {})).toEqual({})
  })

  it('refuses a name the schema does not list, including names of Object.prototype', () => {
    expect(read(StaticListQuery, { page: '2' })).toBe('unknown query parameter "page"')
    expect(read(StaticListQuery, { status: 'active' })).toBe('unknown query parameter "status"')
    expect(read(StaticListQuery, { constructor: 'x' })).toBe('unknown query parameter "constructor"')
  })

  it.each(['1e2', '0x10', ' 5', '5 ', '+5', '-1', '1.0', '', '0', '1001', '1'.repeat(16)])('refuses limit=%p, which is not plain digits in range', (limit) => {
    expect(read(StaticListQuery, { limit })).toBe('limit must be an integer from 1 to 1000')
  })

  it.each(['1', '0', 'TRUE', 'yes', '', 'toString'])('refuses include_deleted=%p', (value) => {
    expect(read(StaticListQuery, { include_deleted: value })).toBe('include_deleted must be "true" or "false"')
  })

  it('answers each field its own message', () => {
    expect(read(StaticListQuery, { updated_since: '-1' })).toBe('updated_since must be epoch seconds (a non-negative integer)')
    expect(read(DynamicListQuery, { status: 'archived' })).toBe('status must be "active" or "draft"')
    expect(read(AnalyticsQuery, { to: '2025-1-1' })).toBe('to must be a date YYYY-MM-DD (UTC)')
  })

  it('reads a repeatable field (tag) as an array, given once or more; any other name given twice is a 400', () => {
    expect(read(StaticListQuery, { tag: 'print' })).toEqual({ tag: ['print'] })
    expect(read(DynamicListQuery, { tag: ['print', 'Menu'], sort: '-updated_at', q: 'a b' })).toEqual({ tag: ['print', 'Menu'], sort: '-updated_at', q: 'a b' })
    expect(read(StaticListQuery, { tag: ['ok', 'not ok'] })).toBe('tag: each tag must be 1 to 32 characters of ASCII letters, digits, - or _; at most 10 tag parameters')
    expect(read(StaticListQuery, { limit: ['1', '2'] })).toBe('query parameter "limit" may be given only once')
    expect(read(AnalyticsQuery, { from: ['2025-01-01', '2025-01-02'] })).toBe('query parameter "from" may be given only once')
    expect(read(StaticListQuery, { sort: 'size' })).toBe('sort must be one of created_at, -created_at, updated_at, -updated_at, name')
  })
})
