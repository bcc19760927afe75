import { describe, expect, it } from 'bun:test'
import { readyJson, readyJsonBytes } from '../src/ready-json'

describe('ready JSON answers', () => {
  const json = (size: number) => new TextEncoder().encode(JSON.stringify({ items: ['naïve ✓ '.repeat(size / 10)] }))

  for (const [what, size] of [['a small body, whole', 1000], ['a body over 8 KiB, in pieces (one byte over a piece, and many pieces)', 8 * 1024 + 1], ['a 300 KB body', 300_000]] as const) {
    it(`sends ${what} byte for byte, as JSON, and keeps its bytes for compression`, async () => {
      const body = json(size)
      const response = readyJson(body)
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(body)
      expect(readyJsonBytes(response)).toBe(body)
    })
  }

  it('sends the same kept bytes to any number of answers', async () => {
    const body = json(50_000)
    const texts = await Promise.all(Array.from({ length: 5 }, () => readyJson(body).text()))
    expect(new Set(texts)).toEqual(new Set([new TextDecoder().decode(body)]))
  })

  it('sends them through a real server in one piece to the client', async () => {
    const body = json(40_000)
    // Answered a turn late, as over NATS.
    const server = Bun.serve({ port: 0, fetch: () => new Promise((resolve) => setImmediate(() => resolve(readyJson(body)))) })
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/`)
      expect(await response.json()).toEqual(JSON.parse(new TextDecoder().decode(body)))
    } finally {
      server.stop(true)
    }
  })
})
