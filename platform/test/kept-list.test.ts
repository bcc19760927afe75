import { describe, expect, it } from 'bun:test'
import { keptListText, pageTagOf, readKeptList, UNCHANGED_TEXT } from '@lr/platform/kept-list'

const bytes = (text: string) => new TextEncoder().encode(text)
const text = (view: Uint8Array) => new TextDecoder().decode(view)

describe('kept list pages', () => {
  it('reads back the page bytes and the tag it was sent with, the tag null or not', () => {
    const page = '{"qrcodes":[{"name":"naïve \\"page\\" ✓"}],"next_cursor":null}'
    for (const tag of [pageTagOf(42, page), null]) {
      const answer = readKeptList(bytes(keptListText(tag, page)))
      expect(answer.unchanged).toBe(false)
      if (answer.unchanged) return
      expect([answer.tag, text(answer.page), JSON.parse(text(answer.page))]).toEqual([tag, page, JSON.parse(page)])
    }
  })

  it('reads the unchanged answer', () => {
    expect(readKeptList(bytes(UNCHANGED_TEXT))).toEqual({ unchanged: true })
  })

  it('gives a page a tag of its position and its exact text', () => {
    expect(pageTagOf(7, '{"a":1}')).toBe(pageTagOf(7, '{"a":1}'))
    expect(pageTagOf(7, '{"a":1}')).not.toBe(pageTagOf(8, '{"a":1}'))
    expect(pageTagOf(7, '{"a":1}')).not.toBe(pageTagOf(7, '{"a":2}'))
    expect(pageTagOf(2 ** 52, 'x'.repeat(100_000))).toMatch(/^[0-9a-z]+\.[0-9a-z]+$/)
  })

  it('reads the page alone (a service from before known) as a page without a tag', () => {
    const page = '{"qrcodes":[],"next_cursor":null}'
    const answer = readKeptList(bytes(page))
    expect(answer).toEqual({ unchanged: false, tag: null, page: bytes(page) })
  })

  it('refuses a tagged answer of any other shape', () => {
    for (const other of ['{"tag":"bad tag","page":{}}', '{"tag":null,"page":{}]', '{"tag":null}', '{"tag":"a.b","other":{}}'])
      expect(() => readKeptList(bytes(other))).toThrow('malformed list reply')
  })
})
