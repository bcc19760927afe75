import { describe, expect, it } from 'bun:test'
import { isApiPath } from '../src/plugins/api-key-auth'

describe('which requests the key check takes', () => {
  it('reads the path as new URL would, from URLs as Bun and new Request give them (normalised)', () => {
    const urls = [
      'http://127.0.0.1:8080/v1/qrcodes?limit=5', 'https://api.example.com/v1', 'http://h/', 'http://h/v2/v1',
      'http://h/healthz?next=/v1/qrcodes', 'http://h/docs#/v1', 'http://[::1]:3000/v1/dynqrcodes', 'http://h//v1/qrcodes',
      new Request('http://h/./x/../v1/qrcodes').url, new Request('http://h/%2e/v1/qrcodes').url,
    ]
    for (const url of urls) expect([url, isApiPath(url)]).toEqual([url, new URL(url).pathname.startsWith('/v1')])
    expect(urls.filter(isApiPath)).toHaveLength(5)
  })
})
