import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '@lr/proto'
import { createLogger, installLogger } from '@lr/platform/log'
import { startStandalone } from '@lr/standalone'
import { adminOf } from './harness/stack'

/** One raw request line and headers, as a client without a Host header sends them (HTTP/1.0 may). */
function raw(port: number, head: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    let text = ''
    const socket = connect(port, '127.0.0.1', () => socket.end(`${head}\r\n\r\n`))
    socket.on('data', (chunk) => (text += chunk)).on('error', reject).on('end', () => {
      const [headers = '', body = ''] = text.split('\r\n\r\n')
      resolve({ status: Number(headers.split(' ')[1]), headers: headers.toLowerCase(), body })
    })
  })
}

/**
 * Bun gives a request without a Host header a relative request.url (`/abcDEF12`), with its dot
 * segments as sent. The resolver read every such path as `/` (a 404 for a live code), and the
 * gateway's error handler failed on it (a 500 in HTML).
 */
describe('requests without a Host header', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'lr-no-host-'))
  const env = { ...(Bun.env as Record<string, string>), TRANSPORT: 'memory', DATA_DIR: dataDir, SHORT_BASE_URL: 'http://short.test' }
  installLogger(createLogger('standalone', 'warn'))
  let product: Awaited<ReturnType<typeof startStandalone>>
  let api: ReturnType<typeof Bun.serve>
  let short: ReturnType<typeof Bun.serve>
  let key: string
  let code: string

  beforeAll(async () => {
    product = await startStandalone(loadConfig(env))
    api = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: product.gateway.fetch })
    short = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request, server) => product.resolver.fetch(request, server) })
    const { admin } = adminOf(env)
    const { account_id } = await admin('account', 'create', '--email', 'nohost@example.com', '--tier', 'pro')
    key = (await admin('key', 'create', '--account', account_id, '--scope', 'personal')).key
    const created = await product.gateway.handle(new Request('http://localhost/v1/dynqrcodes', { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ destination_url: 'https://example.com/menu', name: 'Menu' }) }))
    code = ((await created.json()) as { created: { code: string }[] }).created[0]!.code
  }, 30_000)
  afterAll(async () => {
    api?.stop(true)
    short?.stop(true)
    await product?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('the resolver redirects a live code, with its query, and resolves dot segments as it does with a Host', async () => {
    for (const target of [`/${code}?utm=1`, `/x/../${code}?utm=1`]) {
      const res = await raw(short.port!, `GET ${target} HTTP/1.0`)
      expect([target, res.status, res.headers]).toEqual([target, 302, expect.stringContaining('location: https://example.com/menu?utm=1')])
    }
    expect((await raw(short.port!, 'GET /Nope1234 HTTP/1.0')).status).toBe(404)
  })

  // README "The short-link resolver": its answer depends on the path alone, so the Host lines the
  // API refuses change nothing here, and a Host that names a path cannot pick another code.
  it('the resolver answers two Host headers, or one naming a path, as it would one Host', async () => {
    for (const hosts of ['Host: short.test\r\nHost: api.example', 'Host: evil.example/Nope1234?', 'Host: short.test']) {
      const res = await raw(short.port!, `GET /${code}?utm=1 HTTP/1.1\r\n${hosts}\r\nConnection: close`)
      expect([hosts, res.status, res.headers]).toEqual([hosts, 302, expect.stringContaining('location: https://example.com/menu?utm=1')])
    }
  })

  it('the gateway answers 400 JSON (a Host header is required), never a 500 or a wrong route', async () => {
    for (const head of ['GET /v1/dynqrcodes HTTP/1.0', `GET /v1/dynqrcodes/${code} HTTP/1.0\r\nx-api-key: ${key}`, 'GET /x/../v1/nothing HTTP/1.0', 'GET /healthz HTTP/1.1\r\nHost:']) {
      const res = await raw(api.port!, head)
      expect([head, res.status, JSON.parse(res.body)]).toEqual([head, 400, { error: 'a Host header is required' }])
      expect(res.headers).toContain('x-request-id: ')
    }
    // One that names no host, and two (RFC 9112 §3.2: a proxy may have routed by the other): said as they are.
    for (const [head, error] of [
      [`GET /v1/dynqrcodes/${code} HTTP/1.1\r\nHost: a b\r\nx-api-key: ${key}`, 'the Host header is not a valid host[:port]'],
      [`GET /v1/dynqrcodes/${code} HTTP/1.1\r\nHost: evil.example/path?x\r\nx-api-key: ${key}`, 'the Host header is not a valid host[:port]'],
      [`GET /v1/dynqrcodes/${code} HTTP/1.1\r\nHost: api.example\r\nHost: other.example\r\nx-api-key: ${key}`, 'more than one Host header'],
    ]) {
      const res = await raw(api.port!, `${head}\r\nConnection: close`)
      expect([head, res.status, JSON.parse(res.body)]).toEqual([head, 400, { error }])
    }
    const hosted = await raw(api.port!, `GET /v1/dynqrcodes/${code} HTTP/1.0\r\nHost: api.example\r\nx-api-key: ${key}`)
    expect([hosted.status, JSON.parse(hosted.body).code]).toEqual([200, code])
  })

  // Elysia reads a path from request.url's 11th character on unless told otherwise (its
  // `standardHostname`, "http://" and a host of at least 4), so behind a 1-3 character Host it
  // routed `/ab/v1/qrcodes` as `/v1/qrcodes` while the key check, reading the real path, let it
  // pass unchecked (a 500 with no key, and no rate limit), and missed a record's route.
  it('the gateway routes by the path whatever the length of the Host: a short one skips no key check and misroutes nothing', async () => {
    for (const host of ['x', 'ab', 'api']) {
      const unchecked = `/${'a'.repeat(3 - host.length)}/v1/qrcodes`
      const res = await raw(api.port!, `GET ${unchecked} HTTP/1.1\r\nHost: ${host}\r\nConnection: close`)
      expect([host, res.status, JSON.parse(res.body)]).toEqual([host, 404, { error: `no route GET ${unchecked}` }])
      const own = await raw(api.port!, `GET /v1/dynqrcodes/${code} HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${key}\r\nConnection: close`)
      expect([host, own.status, JSON.parse(own.body).code]).toEqual([host, 200, code])
      const put = await raw(api.port!, `PUT /v1/qrcodes HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${key}\r\nContent-Length: 0\r\nConnection: close`)
      expect([host, put.status, put.headers]).toEqual([host, 405, expect.stringContaining('allow: get, head, post, options')])
    }
  })
})
