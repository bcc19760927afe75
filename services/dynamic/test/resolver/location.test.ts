import { describe, expect, it } from 'bun:test'
import { destinationOf, forwardQuery, locationOf, NO_STORE, redirectTo } from '../../src/resolver/location'

describe('forwardQuery', () => {
  const cases: [string, string, string, string][] = [
    ['no scan query', 'https://example.com/a', '', 'https://example.com/a'],
    ['a lone ?', 'https://example.com/a', '?', 'https://example.com/a'],
    ['a destination without a query', 'https://example.com/a', '?x=1&y=2', 'https://example.com/a?x=1&y=2'],
    ['a destination with a query', 'https://example.com/a?k=v', '?x=1', 'https://example.com/a?k=v&x=1'],
    ['a name clash: the destination keeps its value', 'https://example.com/a?utm_source=qr', '?utm_source=mail&z=9', 'https://example.com/a?utm_source=qr&z=9'],
    ['only clashing names', 'https://example.com/a?x=1', '?x=2', 'https://example.com/a?x=1'],
    ['a clash spelt with encoding', 'https://example.com/a?a%20b=1', '?a+b=2', 'https://example.com/a?a%20b=1'],
    ['a fragment, which stays last', 'https://example.com/a?k=v#top', '?x=1', 'https://example.com/a?k=v&x=1#top'],
    ['a destination ending in ?', 'https://example.com/a?', '?x=1', 'https://example.com/a?x=1'],
    ['a destination ending in &', 'https://example.com/a?k=v&', '?x=1', 'https://example.com/a?k=v&x=1'],
    ['empty pairs in the scan query', 'https://example.com/a', '?&x=1&&', 'https://example.com/a?x=1'],
    ['repeated names in the scan query', 'https://example.com/a', '?t=1&t=2', 'https://example.com/a?t=1&t=2'],
    ['encoded values, forwarded as sent', 'https://example.com/a', '?q=a%26b%3Dc', 'https://example.com/a?q=a%26b%3Dc'],
  ]
  for (const [what, destination, search, expected] of cases) {
    it(`forwards ${what}`, () => {
      expect(forwardQuery(destinationOf(destination), search)).toBe(expected)
    })
  }
})

describe('locationOf', () => {
  it('sends a destination in its normal form, whatever form an older row holds', () => {
    expect(locationOf('https://example.com/A?b=c%20d#e')).toBe('https://example.com/A?b=c%20d#e')
    expect(locationOf('HTTPS://Example.com/A')).toBe('https://example.com/A')
    expect(locationOf('https:\\\\evil.example')).toBe('https://evil.example/')
    expect(locationOf('https:/\\evil.example/x')).toBe('https://evil.example/x')
  })

  it('serialises a destination with other text into a valid header value', () => {
    expect(locationOf('https://例え.jp/パス?q=ü')).toBe('https://xn--r8jz45g.jp/%E3%83%91%E3%82%B9?q=%C3%BC')
  })
})

describe('redirectTo', () => {
  const headersOf = (response: Response) => Object.fromEntries(response.headers.entries())

  it('answers 302 with no-store and the location, the query forwarded when there is one', () => {
    const destination = destinationOf('https://example.com/a?k=v')
    const plain = redirectTo(destination, '')
    expect(plain.status).toBe(302)
    expect(headersOf(plain)).toEqual({ ...NO_STORE, location: 'https://example.com/a?k=v' })
    expect(headersOf(redirectTo(destination, '?x=1'))).toEqual({ ...NO_STORE, location: 'https://example.com/a?k=v&x=1' })
    expect(headersOf(redirectTo(destination, '?k=other'))).toEqual({ ...NO_STORE, location: 'https://example.com/a?k=v' })
  })

  it('gives each response its own headers: a change to one never reaches the next', () => {
    const destination = destinationOf('https://example.com/a')
    const first = redirectTo(destination, '')
    first.headers.set('location', 'https://evil.example/')
    first.headers.set('x-extra', '1')
    expect(headersOf(redirectTo(destination, ''))).toEqual({ ...NO_STORE, location: 'https://example.com/a' })
    expect(headersOf(new Response(null, { headers: destination.headers }))).toEqual({ ...NO_STORE, location: 'https://example.com/a' })
  })
})
