import { describe, expect, it } from 'bun:test'
import { AppError, type Bus } from '@lr/proto'
import { createGateway } from '../src/app'
import { captureLog } from '@lr/platform/testing/log-capture'

/** A bus whose every request fails as the transport would; the gateway under test is real. */
const failingBus = (error: AppError): Bus => ({
  maxPayload: 1 << 20,
  request: async () => Promise.reject(error),
  requestJson: async () => Promise.reject(error),
  serve: () => () => undefined,
  publish: async () => undefined,
  subscribe: () => () => undefined,
  ping: async () => false,
  close: async () => undefined,
})

const get = (bus: Bus) =>
  createGateway({ bus }).handle(new Request('http://localhost/v1/qrcodes', { headers: { 'x-api-key': 'lrp_x' } }))

describe('transport failures as the client sees them', () => {
  it('answers a service nobody answers with 503, Retry-After and no subject', async () => {
    const res = await get(failingBus(new AppError('unavailable', 'no service answers auth.v1.verify')))
    expect([res.status, res.headers.get('retry-after')]).toEqual([503, '1'])
    expect(await res.json()).toEqual({ error: 'the service is temporarily unavailable, please retry shortly' })
  })

  it('answers a service that did not answer in time with 504 and no subject', async () => {
    const res = await get(failingBus(new AppError('timeout', 'auth.v1.verify did not answer in time')))
    expect(res.status).toBe(504)
    expect(await res.json()).toEqual({ error: 'the service did not answer in time, please retry shortly' })
  })

  it('logs such a failure in its request line, with the detail the client is not shown: one line, not two', async () => {
    const log = captureLog()
    try {
      const res = await get(failingBus(new AppError('unavailable', 'no service answers auth.v1.verify')))
      expect(res.status).toBe(503)
      await Bun.sleep(20) // the access line is written after the response
      const id = res.headers.get('x-request-id')
      expect(log.lines.filter((line) => line.request_id === id || line.msg === 'service unavailable')).toEqual([expect.objectContaining({ msg: 'request', status: 503, code: 'unavailable', detail: 'no service answers auth.v1.verify' })])
    } finally {
      log.restore()
    }
  })

  it('leaves every other error as the service wrote it', async () => {
    const res = await get(failingBus(new AppError('forbidden', 'invalid API key')))
    expect([res.status, await res.json()]).toEqual([403, { error: 'invalid API key' }])
  })
})
