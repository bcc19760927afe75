import { describe, expect, it } from 'bun:test'
import { connect } from 'node:net'
import { destinationOf, forwardQuery, locationOf, NO_STORE, pathAndSearchOf, redirectTo } from '../../src/resolver/location'

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

describe('pathAndSearchOf', () => {
  const asUrl = (href: string) => {
    const url = new URL(href)
    return { path: url.pathname, search: url.search }
  }

  it('reads the path and query URL would read from a serialised URL', () => {
    for (const href of [
      'http://127.0.0.1:8081/abcDEF12',
      'http://s.example/abcDEF12?x=1&y=2',
      'http://s.example/abcDEF12?',
      'http://s.example/abcDEF12#top',
      'http://s.example/abcDEF12?x=1#top',
      'http://s.example/abcDEF12?#top',
      'http://s.example/go/abcDEF12?next=/a?b',
      'http://user:pw@s.example:8080/abc',
      'http://s.example/',
      'http://[::1]:8081/abcDEF12?q=%22',
    ])
      expect(pathAndSearchOf(href)).toEqual(asUrl(href))
  })

  // The shortcut rests on Bun.serve giving request.url in URL's serialised form: sent raw, a path
  // with dot segments, a query with characters URL encodes, a fragment, an encoded letter.
  it('agrees with URL on request.url as Bun.serve gives it, whatever the request line held', async () => {
    const seen: string[] = []
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => (seen.push(request.url), new Response('ok')) })
    const send = (target: string) =>
      new Promise<void>((resolve, reject) => {
        const socket = connect(server.port!, '127.0.0.1', () => socket.end(`GET ${target} HTTP/1.1\r\nHost: s.example\r\nConnection: close\r\n\r\n`))
        socket.on('data', () => undefined).on('end', () => resolve()).on('error', reject)
      })
    try {
      for (const target of ['/abcDEF12', '/x/../abcDEF12?a=1', '/abcDEF12?q="<>\'', '/abcDEF12?', '/abcDEF12#frag', '/%61bcDEF12', '//abcDEF12?x=1#y', '/./abcDEF12?a=%zz'])
        await send(target)
    } finally {
      server.stop(true)
    }
    expect(seen).toHaveLength(8)
    for (const href of seen) expect(pathAndSearchOf(href)).toEqual(asUrl(href))
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
