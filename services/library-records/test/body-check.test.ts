import { describe, expect, it } from 'bun:test'
import { StaticCreateBody, StaticPatchBody } from '@lr/proto'
import { compileBodyCheck } from '../src/body-check'
import { recordRules } from '../src/field-rules'
import { FieldError } from '../src/fields'

const checkCreate = compileBodyCheck(StaticCreateBody, recordRules('url'))
const checkPatch = compileBodyCheck(StaticPatchBody, recordRules('url'))
const valid = { url: 'https://example.com/', name: 'Menu' }

function problem(check: (body: unknown) => unknown, body: unknown): string {
  try {
    check(body)
  } catch (error) {
    expect(error).toBeInstanceOf(FieldError)
    return (error as Error).message
  }
  throw new Error('expected a FieldError')
}

describe('compileBodyCheck', () => {
  it('keeps the schema object it compiled', () => {
    expect(checkCreate.schema).toBe(StaticCreateBody)
  })

  it('returns the clean body with the name trimmed', () => {
    expect(checkCreate({ ...valid, name: '  Menu  ', style: { a: 1 } })).toEqual({ ...valid, style: { a: 1 } })
  })

  // Own keys only: names Object.prototype carries are fields like any other.
  for (const field of ['__proto__', '__defineGetter__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
    it(`rejects a body field named ${field} by name, on create and on PATCH`, () => {
      const withField = (body: object) => JSON.parse(JSON.stringify(body).replace(/^\{/, `{"${field}":1,`))
      expect(problem(checkCreate, withField(valid))).toBe(`unknown field "${field}"`)
      expect(problem(checkPatch, withField({ name: 'x' }))).toBe(`unknown field "${field}"`)
    })
  }

  it('never lets a body field reach a prototype', () => {
    const body = JSON.parse('{"url":"https://example.com/","name":"x","__proto__":{"polluted":true}}')
    expect(() => checkCreate(body)).toThrow(FieldError)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('names an unknown field before a missing one, and a missing one before a bad value', () => {
    expect(problem(checkCreate, { name: 7, extra: 1 })).toBe('unknown field "extra"')
    expect(problem(checkCreate, { name: 7 })).toBe('url is required')
  })

  it('treats a required field sent as null as missing, and an optional one as a bad value', () => {
    expect(problem(checkCreate, { ...valid, url: null })).toBe('url is required')
    expect(problem(checkPatch, { url: null })).toBe('url must be a string')
  })

  it('reports bad values in the order the body lists them', () => {
    expect(problem(checkPatch, { style: 'red', status: 'gone' })).toBe('style must be a JSON object')
    expect(problem(checkPatch, { status: 'gone', style: 'red' })).toBe('status must be "active" or "draft"')
  })

  it('runs the rules a schema cannot say only once the schema passed', () => {
    expect(problem(checkCreate, { ...valid, url: 'ftp://example.com/' })).toBe('url must be an absolute http or https URL with a host')
    expect(problem(checkCreate, { ...valid, url: 5 })).toBe('url must be a string')
  })

  it('counts a name in characters (code points), not UTF-16 units', () => {
    const emoji = '\u{1F600}'
    expect(checkCreate({ ...valid, name: emoji.repeat(200) }).name).toBe(emoji.repeat(200))
    expect(problem(checkCreate, { ...valid, name: emoji.repeat(201) })).toBe('name must be 1 to 200 characters after trimming')
    expect(problem(checkPatch, { name: emoji.repeat(201) })).toBe('name must be 1 to 200 characters after trimming')
    expect(problem(checkCreate, { ...valid, name: '   ' })).toBe('name must be 1 to 200 characters after trimming')
  })

  it('keeps a URL in its normal form, on create and on PATCH', () => {
    for (const [sent, kept] of [
      ['HTTPS://Example.COM', 'https://example.com/'],
      ['https:\\\\evil.example', 'https://evil.example/'],
      ['https:/\\evil.example/a', 'https://evil.example/a'],
      ['https:evil.example', 'https://evil.example/'],
      ['https:///evil.example', 'https://evil.example/'],
      ['https://bücher.example/ü?q=ü', 'https://xn--bcher-kva.example/%C3%BC?q=%C3%BC'],
    ]) {
      expect(checkCreate({ ...valid, url: sent }).url).toBe(kept!)
      expect(checkPatch({ url: sent }).url).toBe(kept!)
    }
  })

  it('refuses a URL with a user name or password, even an empty one', () => {
    for (const url of ['https://paypal.com@evil.example', 'https://user:pass@x.example/', 'https://@x.example', 'https://:@x.example', 'https:\\\\paypal.com@evil.example']) {
      expect(problem(checkCreate, { ...valid, url })).toBe('url must not carry a user name or password (user@host)')
      expect(problem(checkPatch, { url })).toBe('url must not carry a user name or password (user@host)')
    }
    // An @ after the host is part of the path, query or fragment.
    expect(checkCreate({ ...valid, url: 'https://x.example/a@b?c=d@e#@f' }).url).toBe('https://x.example/a@b?c=d@e#@f')
  })

  it('refuses a URL whose normal form exceeds 2048 characters', () => {
    const url = `https://example.com/${'é'.repeat(2000)}`
    expect(problem(checkCreate, { ...valid, url })).toBe('url must be at most 2048 characters once normalised; this one has 12020')
  })
})
