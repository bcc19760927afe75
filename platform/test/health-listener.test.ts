import { afterAll, describe, expect, it } from 'bun:test'
import { startHealthListener } from '@lr/platform/health-listener'
import { JSON_CONTENT_TYPE } from '@lr/proto'

// Switches the fakes flip to stand for the service's ready() and the bus ping.
const state = { store: true, nats: true, hang: false }
const listener = startHealthListener(0, {
  store: async () => state.store,
  nats: async () => {
    if (state.hang) await new Promise(() => {})
    return state.nats
  },
})
afterAll(() => listener.stop())

const get = (path: string, method = 'GET') => fetch(`http://127.0.0.1:${listener.port}${path}`, { method })
const set = (next: Partial<typeof state>) => Object.assign(state, { store: true, nats: true, hang: false }, next)

describe('health listener', () => {
  it('answers /healthz with 200 while the process lives', async () => {
    set({ store: false, nats: false })
    const response = await get('/healthz')
    expect([response.status, response.headers.get('content-type')]).toEqual([200, JSON_CONTENT_TYPE])
    expect(await response.json()).toEqual({ status: 'ok' })
  })

  it('answers /readyz with 200 while the store and the bus answer', async () => {
    set({})
    const response = await get('/readyz')
    expect([response.status, response.headers.get('content-type')]).toEqual([200, JSON_CONTENT_TYPE])
    expect(await response.json()).toEqual({ status: 'ready', checks: { store: true, nats: true } })
  })

  it('answers /readyz with 503 naming the store when ready() is false', async () => {
    set({ store: false })
    const response = await get('/readyz')
    expect(response.status).toBe(503)
    expect(await response.json()).toEqual({ status: 'unavailable', checks: { store: false, nats: true } })
  })

  it('answers /readyz with 503 naming NATS when the bus ping fails', async () => {
    set({ nats: false })
    const response = await get('/readyz')
    expect(response.status).toBe(503)
    expect(await response.json()).toEqual({ status: 'unavailable', checks: { store: true, nats: false } })
  })

  it('follows the checks: ready again once they pass again', async () => {
    set({ store: false })
    expect((await get('/readyz')).status).toBe(503)
    set({})
    expect((await get('/readyz')).status).toBe(200)
  })

  it('counts a check that does not answer within 2 s as failed', async () => {
    set({ hang: true })
    const response = await get('/readyz')
    expect(response.status).toBe(503)
    expect(await response.json()).toEqual({ status: 'unavailable', checks: { store: true, nats: false } })
  })

  it('answers 404 on any other path and 405 on other methods', async () => {
    expect((await get('/v1/qrcodes')).status).toBe(404)
    expect((await get('/readyz', 'POST')).status).toBe(405)
  })
})

describe('health listener with an optional dependency', () => {
  const optional = { nats: true }
  const resolver = startHealthListener(0, {}, { nats: async () => optional.nats })
  afterAll(() => resolver.stop())
  const readyz = async () => {
    const response = await fetch(`http://127.0.0.1:${resolver.port}/readyz`)
    return [response.status, await response.json()]
  }

  it('stays 200 while it does not answer, listing it under degraded', async () => {
    expect(await readyz()).toEqual([200, { status: 'ready', checks: {}, degraded: [] }])
    optional.nats = false
    expect(await readyz()).toEqual([200, { status: 'ready', checks: {}, degraded: ['nats'] }])
  })
})
