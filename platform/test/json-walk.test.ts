import { describe, expect, it } from 'bun:test'
import { firstInJson, type JsonNode } from '../src/json-walk'

const nul = ({ value }: JsonNode) => (typeof value === 'string' && value.includes('\u0000') ? 'holds NUL' : undefined)

describe('firstInJson', () => {
  it('names the place of the first problem in document order, as a client writes it', () => {
    const body = JSON.parse('{"a":"ok","style":{"k":[1,"x\\u0000"],"m":"\\u0000"},"z":"\\u0000"}')
    expect(firstInJson(body, nul)).toEqual({ place: 'style.k[1]', reason: 'holds NUL', name: false })
  })

  it('names the object that holds a member name with a problem, and judges names before their values', () => {
    const body = JSON.parse('[{"ok":1},{"style":{"a\\u0000":"\\u0000"}}]')
    expect(firstInJson(body, nul)).toEqual({ place: '[1].style', reason: 'holds NUL', name: true })
  })

  it('answers the empty place for the body itself, and nothing for a body without problems', () => {
    expect(firstInJson('\u0000', nul)).toEqual({ place: '', reason: 'holds NUL', name: false })
    expect(firstInJson({ a: [1, { b: 'c' }], d: null }, nul)).toBeUndefined()
  })

  it('walks 100,000 levels without using the stack, and gives the depth of each value', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)
    const tooDeep = ({ value, depth }: JsonNode) => (Array.isArray(value) && depth > 64 ? 'too deep' : undefined)
    expect(firstInJson(deep, tooDeep)?.reason).toBe('too deep')
  })
})
