import { describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

const USED_ELSEWHERE = { error: 'this Idempotency-Key was already used with a different request' }

/**
 * Idempotency-Key on POST /v1/webhooks (docs/decisions.md §8), as on the record creates: run by
 * webhooksSuite, whose stack lets endpoints at `url(path)` (127.0.0.1) through.
 */
export function webhookIdempotencySuite(stack: () => Stack, url: (path: string) => string) {
  describe('Idempotency-Key on POST /v1/webhooks', () => {
    const post = (key: string, path: string, body: unknown, idem?: string) =>
      call(stack(), 'POST', path, { key, body, headers: idem ? { 'idempotency-key': idem } : {} })
    const hook = (n: number) => ({ url: url(`/ok/idem-${n}`), events: ['record.created'] })
    const record = (n: number) => ({ url: `https://example.com/idem-${n}`, name: `Idem ${n}` })
    const hooks = async (key: string) => (await call(stack(), 'GET', '/v1/webhooks', { key })).body.webhooks.length as number
    const records = async (key: string) => (await call(stack(), 'GET', '/v1/qrcodes?limit=1000', { key })).body.qrcodes.length as number

    it('replays the first answer (same id and secret) of a retried create and creates no second endpoint', async () => {
      const own = await freshMember(stack())
      const first = await post(own.key, '/v1/webhooks', hook(1), 'hook-retry')
      expect(first.status).toBe(201)
      const again = await post(own.key, '/v1/webhooks', hook(1), 'hook-retry')
      expect([again.status, again.body]).toEqual([201, first.body])
      expect(await hooks(own.key)).toBe(1)
    })

    it('answers 422 and creates nothing when the key comes back with another body', async () => {
      const own = await freshMember(stack())
      expect((await post(own.key, '/v1/webhooks', hook(2), 'hook-clash')).status).toBe(201)
      const res = await post(own.key, '/v1/webhooks', hook(3), 'hook-clash')
      expect([res.status, res.body]).toEqual([422, USED_ELSEWHERE])
      expect(await hooks(own.key)).toBe(1)
    })

    // The key's first route, then another: each way round between a record create and this one.
    const webhooks = { path: '/v1/webhooks', body: hook, count: hooks }
    const qrcodes = { path: '/v1/qrcodes', body: record, count: records }
    for (const [first, second] of [[qrcodes, webhooks], [webhooks, qrcodes]] as const) {
      it(`answers 422 when a key of POST ${first.path} comes back on POST ${second.path}, and creates nothing there`, async () => {
        const own = await freshMember(stack())
        const idem = `from-${first.path}`
        expect((await post(own.key, first.path, first.body(4), idem)).status).toBe(201)
        const res = await post(own.key, second.path, second.body(4), idem)
        expect([res.status, res.body]).toEqual([422, USED_ELSEWHERE])
        expect(await second.count(own.key)).toBe(0)
      })
    }

    it('replays a create that succeeded with its 201 even once the library is at its limit', async () => {
      const own = await freshMember(stack())
      let last = await post(own.key, '/v1/webhooks', hook(0), 'hook-0')
      for (let n = 1; n < 10; n++) last = await post(own.key, '/v1/webhooks', hook(n), `hook-${n}`)
      expect(last.status).toBe(201)
      const again = await post(own.key, '/v1/webhooks', hook(9), 'hook-9')
      expect([again.status, again.body]).toEqual([201, last.body])
      expect(await hooks(own.key)).toBe(10)
    })

    it('rejects a malformed Idempotency-Key (a space) with 400 and creates nothing', async () => {
      const own = await freshMember(stack())
      const res = await post(own.key, '/v1/webhooks', hook(6), 'has space')
      expect([res.status, res.body]).toEqual([400, { error: 'Idempotency-Key must be 1 to 255 visible ASCII characters' }])
      expect(await hooks(own.key)).toBe(0)
    })
  })
}
