import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { call } from '../harness/client'
import { freshMember, type Member } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

export const CORS_ORIGIN = 'https://app.example'

/**
 * The bytes as they travel, never decoded by the client: `decompress: false` stops Bun's fetch
 * both from sending its own Accept-Encoding and from undoing the Content-Encoding (in one process
 * there is no fetch: the gateway's Response is read as it is).
 */
async function raw(stack: Stack, path: string, key: string, headers: Record<string, string> = {}) {
  const res = await stack.request(path, { headers: { 'x-api-key': key, ...headers }, decompress: false } as RequestInit)
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) }
}

const decode = (coding: string | null, bytes: Uint8Array) =>
  new TextDecoder().decode(coding === 'gzip' ? gunzipSync(bytes) : coding === 'br' ? brotliDecompressSync(bytes) : bytes)

const item = (n: number) => ({ url: `https://example.com/menu/${n}?ref=poster`, name: `Code ${n}`, style: { fg: '#000000', bg: '#ffffff' } })

/**
 * HTTP conventions of the API (docs/decisions.md §10): compression, 405 with Allow, Location on
 * creates, OPTIONS. `withCors` starts a gateway of the same deployment with CORS_ORIGINS set.
 */
export function httpSuite(stack: () => Stack, withCors: () => Promise<Stack>) {
  describe('compression', () => {
    let own: Member
    beforeAll(async () => {
      own = await freshMember(stack())
      for (let b = 0; b < 20; b++) {
        const res = await call(stack(), 'POST', '/v1/qrcodes/batch', { key: own.key, body: { qrcodes: Array.from({ length: 50 }, (_, i) => item(b * 50 + i)) } })
        expect(res.status).toBe(201)
      }
    }, 60_000)

    for (const coding of ['gzip', 'br']) {
      it(`answers a 1000-record page in ${coding} when asked, much smaller and the same JSON`, async () => {
        const plain = await raw(stack(), '/v1/qrcodes?limit=1000', own.key)
        const packed = await raw(stack(), '/v1/qrcodes?limit=1000', own.key, { 'accept-encoding': coding })
        expect([packed.status, packed.headers.get('content-encoding')]).toEqual([200, coding])
        expect(packed.headers.get('vary')).toContain('Accept-Encoding')
        expect(packed.headers.get('content-type')).toContain('application/json')
        expect(JSON.parse(decode(coding, packed.bytes))).toEqual(JSON.parse(decode(null, plain.bytes)))
        expect(JSON.parse(decode(null, plain.bytes)).qrcodes).toHaveLength(1000)
        expect(packed.bytes.byteLength * 4).toBeLessThan(plain.bytes.byteLength)
      })

      it(`streams the CSV export in ${coding}, the same CSV once decoded`, async () => {
        const plain = await raw(stack(), '/v1/qrcodes/export', own.key)
        const packed = await raw(stack(), '/v1/qrcodes/export', own.key, { 'accept-encoding': coding })
        expect([packed.status, packed.headers.get('content-encoding')]).toEqual([200, coding])
        expect(packed.headers.get('content-type')).toBe('text/csv; charset=utf-8')
        expect(packed.headers.get('content-disposition')).toBe('attachment; filename="qrcodes.csv"')
        const csv = decode(null, plain.bytes)
        expect(csv.split('\r\n')).toHaveLength(1002)
        expect(decode(coding, packed.bytes)).toBe(csv)
        expect(packed.bytes.byteLength).toBeLessThan(plain.bytes.byteLength / 3)
      })
    }

    it('prefers br, follows q-values, and answers identity when nothing acceptable is offered', async () => {
      const coding = async (acceptEncoding: string) => (await raw(stack(), '/v1/qrcodes?limit=1000', own.key, { 'accept-encoding': acceptEncoding })).headers.get('content-encoding')
      expect(await coding('gzip, deflate, br')).toBe('br')
      expect(await coding('br;q=0.5, gzip')).toBe('gzip')
      expect(await coding('deflate, identity')).toBeNull()
      expect(await coding('*;q=0')).toBeNull()
    })

    it('answers identity without Accept-Encoding, with Vary', async () => {
      const res = await raw(stack(), '/v1/qrcodes?limit=1000', own.key)
      expect(res.headers.get('content-encoding')).toBeNull()
      expect(res.headers.get('vary')).toContain('Accept-Encoding')
      expect(JSON.parse(decode(null, res.bytes)).qrcodes).toHaveLength(1000)
    })

    it('marks every /v1 answer private to its key and not to be sniffed (JSON, CSV, 404, 403), the probes not, and the docs page not to be framed', async () => {
      for (const [path, key] of [['/v1/qrcodes', own.key], ['/v1/qrcodes/export', own.key], ['/v1/nothing', own.key], ['/v1/qrcodes', '']] as const) {
        const res = await raw(stack(), path, key)
        expect([path, key === '', res.headers.get('cache-control'), res.headers.get('vary')?.split(', '), res.headers.get('x-content-type-options')])
          .toEqual([path, key === '', 'private, no-cache', expect.arrayContaining(['x-api-key', 'Accept-Encoding']), 'nosniff'])
      }
      expect((await raw(stack(), '/readyz', own.key)).headers.get('cache-control')).toBeNull()
      // The docs page (where a key is pasted into "Try it out") may not be framed by another site.
      const docs = await raw(stack(), '/docs', '')
      expect([docs.headers.get('content-security-policy'), docs.headers.get('x-frame-options'), docs.headers.get('x-content-type-options')]).toEqual(["frame-ancestors 'none'", 'DENY', 'nosniff'])
    })

    it('leaves a JSON answer under 1 KiB uncompressed', async () => {
      const res = await raw(stack(), '/v1/qrcodes?limit=1', own.key, { 'accept-encoding': 'gzip, br' })
      expect(res.headers.get('content-encoding')).toBeNull()
      expect(JSON.parse(decode(null, res.bytes)).qrcodes).toHaveLength(1)
    })
  })

  describe('methods and Location', () => {
    let own: Member
    beforeAll(async () => {
      own = await freshMember(stack())
    })
    const api = (method: string, path: string, body?: unknown) => call(stack(), method, path, { key: own.key, body })

    for (const [method, path, allow] of [
      ['PUT', '/v1/qrcodes', 'GET, HEAD, POST, OPTIONS'],
      ['DELETE', '/v1/qrcodes', 'GET, HEAD, POST, OPTIONS'],
      ['POST', '/v1/qrcodes/qr_anything', 'GET, HEAD, PATCH, DELETE, OPTIONS'],
      ['PUT', '/v1/dynqrcodes/Abcdefgh', 'GET, HEAD, PATCH, DELETE, OPTIONS'],
      // A route word's path is served by its own routes only: no id or code is ever a route word.
      ['PUT', '/v1/qrcodes/batch', 'POST, OPTIONS'],
      ['GET', '/v1/qrcodes/batch', 'POST, OPTIONS'],
      ['DELETE', '/v1/dynqrcodes/batch', 'POST, OPTIONS'],
      ['POST', '/v1/dynqrcodes/export', 'GET, HEAD, OPTIONS'],
      ['PATCH', '/v1/qrcodes/export', 'GET, HEAD, OPTIONS'],
      ['DELETE', '/v1/dynqrcodes/analytics', 'GET, HEAD, OPTIONS'],
    ]) {
      it(`answers ${method} ${path} with 405, Allow and a JSON error`, async () => {
        const res = await api(method!, path!, method === 'DELETE' || method === 'GET' ? undefined : { url: 'https://example.com', name: 'x' })
        expect([res.status, res.headers.get('allow')]).toEqual([405, allow!])
        expect(res.body).toEqual({ error: expect.stringContaining(`method ${method} is not allowed`) })
      })
    }

    it('answers OPTIONS on a route word\'s path with its own methods only, and keeps ids that merely look alike', async () => {
      const options = await api('OPTIONS', '/v1/qrcodes/batch')
      expect([options.status, options.headers.get('allow')]).toEqual([204, 'POST, OPTIONS'])
      const unknown = await api('GET', '/v1/qrcodes/qr_batch')
      expect([unknown.status, unknown.body]).toEqual([404, { error: expect.stringContaining('qr_batch') }])
      const notAWord = await api('GET', '/v1/qrcodes/metrics')
      expect(notAWord.status).toBe(404)
    })

    it('answers 405 before reading the body: a malformed one on a wrong method is still 405', async () => {
      const res = await call(stack(), 'PUT', '/v1/qrcodes', { key: own.key, raw: '{not json', headers: { 'content-type': 'text/plain' } })
      expect(res.status).toBe(405)
    })

    it('keeps 404 for a path no route has, and the key check before 405', async () => {
      const unknown = await api('PUT', '/v1/qrcodes/a/b')
      expect([unknown.status, unknown.headers.get('allow')]).toEqual([404, null])
      expect(unknown.body).toEqual({ error: expect.any(String) })
      const keyless = await call(stack(), 'PUT', '/v1/qrcodes')
      expect(keyless.status).toBe(403)
      expect(keyless.body.error).toContain('missing')
    })

    it('refuses a query on a route that takes none with 400, instead of ignoring it (an export asked ?status=draft answered every record)', async () => {
      const [record] = (await api('POST', '/v1/dynqrcodes', { destination_url: 'https://example.com/q', name: 'Q' })).body.created
      const [qr] = (await api('POST', '/v1/qrcodes', { url: 'https://example.com/q', name: 'Q' })).body.created
      const before = (await api('GET', '/v1/dynqrcodes?limit=1000')).body.dynqrcodes.length
      for (const [method, path, body] of [
        ['GET', '/v1/dynqrcodes/export?status=draft'],
        ['GET', '/v1/qrcodes/export?updated_since=abc'],
        ['GET', `/v1/dynqrcodes/${record.code}?foo=1`],
        ['GET', `/v1/qrcodes/${qr.qr_id}?foo=1`],
        ['PATCH', `/v1/dynqrcodes/${record.code}?foo=1`, { name: 'R' }],
        ['DELETE', `/v1/qrcodes/${qr.qr_id}?foo=1`],
        ['POST', '/v1/dynqrcodes?foo=1', { destination_url: 'https://example.com/q', name: 'Q' }],
        ['POST', '/v1/dynqrcodes/batch?foo=1', [{ destination_url: 'https://example.com/q', name: 'Q' }]],
        ['GET', '/v1/webhooks?foo=1'],
      ] as [string, string, unknown?][]) {
        const res = await api(method, path, body)
        const name = new URL(path, 'http://x').searchParams.keys().next().value
        expect([method, path, res.status, res.body]).toEqual([method, path, 400, { error: `unknown query parameter "${name}": this route takes none` }])
      }
      expect((await api('GET', '/v1/dynqrcodes?limit=1000')).body.dynqrcodes.length).toBe(before)
      expect((await api('GET', `/v1/dynqrcodes/${record.code}`)).body.name).toBe('Q')
      expect((await api('GET', `/v1/qrcodes/${qr.qr_id}`)).status).toBe(200)
      expect((await api('GET', `/v1/dynqrcodes/${record.code}?`)).status).toBe(200) // an empty query is none
    })

    it('answers OPTIONS on a known path with 204 and Allow', async () => {
      const res = await api('OPTIONS', '/v1/dynqrcodes')
      expect([res.status, res.headers.get('allow')]).toEqual([204, 'GET, HEAD, POST, OPTIONS'])
    })

    it('gives a static create 201 with Location, where the record answers', async () => {
      const res = await api('POST', '/v1/qrcodes', item(1))
      expect(res.status).toBe(201)
      const id = res.body.created[0].qr_id
      expect(res.headers.get('location')).toBe(`/v1/qrcodes/${id}`)
      const got = await api('GET', res.headers.get('location')!)
      expect([got.status, got.body.qr_id]).toEqual([200, id])
    })

    it('gives a dynamic create 201 with Location, where the record answers', async () => {
      const res = await api('POST', '/v1/dynqrcodes', { destination_url: 'https://example.com/d', name: 'D' })
      expect(res.status).toBe(201)
      const code = res.body.created[0].code
      expect(res.headers.get('location')).toBe(`/v1/dynqrcodes/${code}`)
      const got = await api('GET', res.headers.get('location')!)
      expect([got.status, got.body.code]).toEqual([200, code])
    })

    it('gives a batch create no Location, even of one record', async () => {
      const res = await api('POST', '/v1/qrcodes/batch', { qrcodes: [item(2)] })
      expect([res.status, res.headers.get('location')]).toEqual([201, null])
      const dyn = await api('POST', '/v1/dynqrcodes/batch', [{ destination_url: 'https://example.com/b', name: 'B' }])
      expect([dyn.status, dyn.headers.get('location')]).toEqual([201, null])
    })

    it('gives a failed create no Location', async () => {
      const res = await api('POST', '/v1/qrcodes', { url: 'nope', name: 'x' })
      expect([res.status, res.headers.get('location')]).toEqual([400, null])
    })
  })

  describe('CORS', () => {
    const preflight = { origin: CORS_ORIGIN, 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-api-key, content-type' }

    it('is off by default: a preflight meets the key check and no CORS header is sent', async () => {
      const res = await call(stack(), 'OPTIONS', '/v1/qrcodes', { headers: preflight })
      expect(res.status).toBe(403)
      expect(res.headers.get('access-control-allow-origin')).toBeNull()
    })

    describe('with CORS_ORIGINS set', () => {
      let cors: Stack
      beforeAll(async () => {
        cors = await withCors()
      }, 60_000)
      afterAll(() => cors?.stop())

      it('answers a preflight with 204 and the CORS headers, not 403', async () => {
        const res = await call(cors, 'OPTIONS', '/v1/qrcodes', { headers: preflight })
        expect(res.status).toBe(204)
        expect(res.headers.get('access-control-allow-origin')).toBe(CORS_ORIGIN)
        expect(res.headers.get('access-control-allow-headers')).toContain('x-api-key')
      })

      it('marks the preflight answer private to its key and not to be sniffed, like every other /v1 answer', async () => {
        const res = await call(cors, 'OPTIONS', '/v1/qrcodes', { headers: preflight })
        expect([res.status, res.headers.get('cache-control'), res.headers.get('vary')?.split(', '), res.headers.get('x-content-type-options')])
          .toEqual([204, 'private, no-cache', expect.arrayContaining(['x-api-key', 'Origin']), 'nosniff'])
      })

      it('lets the page read the rate-limit headers and Location of an answer', async () => {
        const member = await freshMember(cors)
        const res = await call(cors, 'POST', '/v1/qrcodes', { key: member.key, body: item(3), headers: { origin: CORS_ORIGIN } })
        expect(res.status).toBe(201)
        expect(res.headers.get('access-control-allow-origin')).toBe(CORS_ORIGIN)
        expect(res.headers.get('access-control-expose-headers')).toContain('X-RateLimit-Remaining')
        expect(res.headers.get('access-control-expose-headers')).toContain('Location')
      })

      it('sends nothing to an origin not listed', async () => {
        const res = await call(cors, 'OPTIONS', '/v1/qrcodes', { headers: { ...preflight, origin: 'https://other.example' } })
        expect(res.status).toBe(403)
        expect(res.headers.get('access-control-allow-origin')).toBeNull()
      })
    })
  })
}
