import { describe, expect, it } from 'bun:test'
import { createLogger, installLogger } from '@lr/platform/log'
import { loadConfig, RECORDS_SUBJECTS } from '@lr/proto'
import { createGateway } from '../src/app'
import { GOOD_KEY, scriptedBus } from './fake-bus'

installLogger(createLogger('gateway', 'warn'))

const APP = 'https://app.example'
const gatewayWith = (setting: string) => {
  const { bus, requests } = scriptedBus({ [RECORDS_SUBJECTS.list]: () => ({ tag: null, page: { qrcodes: [], next_cursor: null } }) }) // a page for a gateway that keeps pages (kept-list.ts)
  const app = createGateway({ bus, corsOrigins: setting })
  return { requests, send: (path: string, init: RequestInit = {}) => app.handle(new Request(`http://localhost${path}`, init)) }
}
const preflight = (origin: string, method = 'POST') => ({
  method: 'OPTIONS',
  headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'x-api-key, content-type, idempotency-key' },
})
const corsHeaders = (res: Response) => [...res.headers.keys()].filter((name) => name.startsWith('access-control-'))

describe('CORS (CORS_ORIGINS)', () => {
  it('answers a preflight from a listed origin with 204 and the allowed methods and headers, before any key check', async () => {
    const { send, requests } = gatewayWith(`${APP}, http://localhost:5173`)
    const res = await send('/v1/qrcodes', preflight(APP))
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe(APP)
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, PATCH, DELETE')
    const allowed = res.headers.get('access-control-allow-headers')!.split(', ')
    expect(allowed).toEqual(expect.arrayContaining(['x-api-key', 'content-type', 'idempotency-key', 'if-match', 'if-none-match']))
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0)
    expect(res.headers.get('vary')).toContain('Origin')
    expect(res.headers.get('x-request-id')).toBeString()
    expect(requests).toEqual([])
  })

  it('answers a preflight of any path and method, even an unknown route', async () => {
    const { send } = gatewayWith(APP)
    const res = await send('/v1/dynqrcodes/abc/analytics/export', preflight(APP, 'DELETE'))
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe(APP)
  })

  it('gives the actual answer the origin and the headers a script may read, on success and on error', async () => {
    const { send } = gatewayWith(APP)
    const ok = await send('/v1/qrcodes', { headers: { origin: APP, 'x-api-key': GOOD_KEY } })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('access-control-allow-origin')).toBe(APP)
    const exposed = ok.headers.get('access-control-expose-headers')!.split(', ')
    expect(exposed).toEqual(expect.arrayContaining([
      'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit', 'RateLimit-Policy',
      'Retry-After', 'X-Request-Id', 'ETag', 'Location',
    ]))
    const refused = await send('/v1/qrcodes', { headers: { origin: APP } })
    expect(refused.status).toBe(403)
    expect(await refused.json()).toEqual({ error: expect.stringContaining('missing') })
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP)
  })

  it('gives an origin not listed no CORS header at all, and its preflight meets the key check', async () => {
    const { send } = gatewayWith(APP)
    const res = await send('/v1/qrcodes', { headers: { origin: 'https://evil.example', 'x-api-key': GOOD_KEY } })
    expect(res.status).toBe(200)
    expect(corsHeaders(res)).toEqual([])
    const pre = await send('/v1/qrcodes', preflight('https://evil.example'))
    expect(pre.status).toBe(403)
    expect(corsHeaders(pre)).toEqual([])
  })

  it('varies on Origin every answer when origins are listed, those without a CORS header too (a shared cache must not give them to a listed origin)', async () => {
    const { send } = gatewayWith(APP)
    for (const headers of <Record<string, string>[]>[{ 'x-api-key': GOOD_KEY }, { origin: 'https://evil.example', 'x-api-key': GOOD_KEY }, { origin: APP, 'x-api-key': GOOD_KEY }]) {
      const res = await send('/v1/qrcodes', { headers })
      expect([res.status, res.headers.get('vary')]).toEqual([200, expect.stringContaining('Origin')])
    }
    expect((await send('/healthz')).headers.get('vary')).toContain('Origin')
  })

  it('with `*` allows every origin with a wildcard, no Vary on Origin', async () => {
    const { send } = gatewayWith('*')
    const pre = await send('/v1/qrcodes', preflight('https://anywhere.example'))
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe('*')
    const res = await send('/v1/qrcodes', { headers: { origin: 'https://anywhere.example', 'x-api-key': GOOD_KEY } })
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
    expect(res.headers.get('vary') ?? '').not.toContain('Origin')
  })

  it('is off by default: no CORS header, and a preflight is refused like any request without a key', async () => {
    const { send } = gatewayWith(loadConfig({}).CORS_ORIGINS)
    const res = await send('/v1/qrcodes', { headers: { origin: APP, 'x-api-key': GOOD_KEY } })
    expect(corsHeaders(res)).toEqual([])
    const pre = await send('/v1/qrcodes', preflight(APP))
    expect(pre.status).toBe(403)
    expect(corsHeaders(pre)).toEqual([])
  })

  it('refuses a setting that is not `*` or a list of origins, naming it', async () => {
    for (const bad of ['https://app.example/', 'app.example', 'https://a.example,*', 'ftp://a.example'])
      expect(() => loadConfig({ CORS_ORIGINS: bad })).toThrow(/CORS_ORIGINS/)
    const { send } = gatewayWith(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).CORS_ORIGINS)
    for (const origin of ['https://a.example', 'http://localhost:5173']) {
      const res = await send('/v1/qrcodes', preflight(origin))
      expect([res.status, res.headers.get('access-control-allow-origin')]).toEqual([204, origin])
    }
  })
})
