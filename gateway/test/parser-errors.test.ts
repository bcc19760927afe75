import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect } from 'node:net'
import { createLogger, installLogger } from '@lr/platform/log'
import { createGateway } from '../src/app'
import { GOOD_KEY, scriptedBus } from './fake-bus'

installLogger(createLogger('gateway', 'warn'))

/** One request written byte for byte on a fresh connection; the answer as the server wrote it. */
function exchange(port: number, request: string): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request))
    let text = ''
    const done = () => {
      const [head = '', body = ''] = text.split('\r\n\r\n', 2)
      resolve({ status: Number(head.split(' ')[1]), head, body })
    }
    socket.on('data', (chunk) => (text += chunk.toString('latin1')))
    socket.on('close', done)
    socket.on('error', reject)
    setTimeout(() => socket.destroy(), 3000)
  })
}

/**
 * Requests Bun's HTTP parser refuses never reach Bun.serve's fetch or error handler, so never
 * Elysia: Bun writes a fixed answer (status line and `Connection: close`, no body) and closes
 * (docs/decisions.md §10). These tests pin that down over a real socket: if a Bun release lets the
 * server answer them, they fail and the decision is to be revisited. What does reach the gateway
 * is answered in JSON, headers of almost Bun's limit included.
 */
describe('requests the HTTP parser refuses', () => {
  let server: { stop(): Promise<void> | void; port: number }
  beforeAll(() => {
    const app = createGateway({ bus: scriptedBus().bus }).listen({ port: 0, hostname: '127.0.0.1' })
    server = { port: app.server!.port!, stop: async () => void (await app.stop()) }
  })
  afterAll(() => server?.stop())

  it('answers headers over 16 KiB with 431 from Bun itself, no body', async () => {
    const answer = await exchange(server.port, `GET /v1/qrcodes HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(answer.status).toBe(431)
    expect(answer.head).toContain('Connection: close')
    expect(answer.body).toBe('')
  })

  it('answers an HTTP version other than 1.x with 505 from Bun itself, no body', async () => {
    const answer = await exchange(server.port, 'GET /v1/qrcodes HTTP/2.5\r\nHost: x\r\n\r\n')
    expect(answer.status).toBe(505)
    expect(answer.body).toBe('')
  })

  it('answers a malformed request line or header with 400 from Bun itself, no body', async () => {
    for (const request of ['GARBAGE\r\n\r\n', 'GET /v1/qrcodes HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n']) {
      const answer = await exchange(server.port, request)
      expect(answer.status).toBe(400)
      expect(answer.body).toBe('')
    }
  })

  it('answers in JSON what gets through: headers of 15 KiB reach the gateway (403, no key)', async () => {
    const answer = await exchange(server.port, `GET /v1/qrcodes HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: ${'a'.repeat(15_000)}\r\n\r\n`)
    expect(answer.status).toBe(403)
    expect(answer.head.toLowerCase()).toContain('content-type: application/json')
    expect(JSON.parse(answer.body)).toEqual({ error: expect.stringContaining('missing API key') })
  })

  // Bun.serve refuses a declared body over its maxRequestBodySize (128 MiB by default) itself, a
  // bare 413 without JSON, request id or cache headers, while 1 MiB to 128 MiB got the API's JSON.
  it('answers any body over 1 MiB with the API\'s JSON 413, a declared length past 128 MiB (Bun\'s own limit) too', async () => {
    for (const length of [2 * 1024 * 1024, 128 * 1024 * 1024 + 1, 10 * 1024 ** 3]) {
      const answer = await exchange(server.port, `POST /v1/qrcodes HTTP/1.1\r\nHost: x\r\nx-api-key: ${GOOD_KEY}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`)
      expect([length, answer.status]).toEqual([length, 413])
      expect(answer.head.toLowerCase()).toContain('content-type: application/json')
      expect(answer.head.toLowerCase()).toContain('x-request-id: ')
      expect(JSON.parse(answer.body)).toEqual({ error: 'request body is larger than 1048576 bytes' })
    }
  })

  it('keeps serving after refusing', async () => {
    const res = await fetch(`http://127.0.0.1:${server.port}/healthz`)
    expect([res.status, await res.json()]).toEqual([200, { status: 'ok' }])
  })
})
