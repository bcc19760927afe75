import { describe, expect, it } from 'bun:test'
import { connect } from 'node:net'
import { pathAndSearchOf } from '@lr/platform/request-url'

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
