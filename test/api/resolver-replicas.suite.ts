import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createNatsBus } from '@lr/platform/bus-nats'
import { createBusFeed, createResolver } from '@lr/dynamic'
import { call } from '../harness/client'
import { freshMember } from '../harness/fixtures'
import { spawnExtraResolver, type Stack } from '../harness/stack'
import { BROWSER, pathOf } from './short-links.suite'

/**
 * Change events reach every resolver process (NATS only: a second resolver beside the stack's),
 * and a write is answered once every live replica has applied its change: the very next scan
 * obeys it, at any replica (nats-settlers.ts).
 */
export function resolverReplicasSuite(stack: () => Stack) {
  describe('two resolver processes', () => {
    let second: Awaited<ReturnType<typeof spawnExtraResolver>>
    beforeAll(async () => {
      second = await spawnExtraResolver(stack())
    }, 30_000)
    afterAll(() => second?.stop())

    it('sends the next scan at either resolver to a changed destination, draft and deletion', async () => {
      const own = await freshMember(stack())
      const api = (method: string, path: string, body?: unknown) => call(stack(), method, `/v1/dynqrcodes${path}`, { key: own.key, body })
      const [record] = (await api('POST', '', { destination_url: 'https://old.example/', name: 'Two' })).body.created
      const resolvers = [(p: string) => stack().short(p, { headers: { 'user-agent': BROWSER } }), (p: string) => second.short(p, { headers: { 'user-agent': BROWSER } })]
      // Each resolver answers once, so both hold the code in memory.
      for (const short of resolvers) expect((await short(pathOf(record))).headers.get('location')).toBe('https://old.example/')

      expect((await api('PATCH', `/${record.code}`, { destination_url: 'https://new.example/' })).status).toBe(200)
      for (const short of resolvers) {
        const next = await short(pathOf(record))
        expect([next.status, next.headers.get('location')]).toEqual([302, 'https://new.example/'])
      }

      expect((await api('PATCH', `/${record.code}`, { status: 'draft' })).status).toBe(200)
      for (const short of resolvers) expect((await short(pathOf(record))).status).toBe(404)

      expect((await api('DELETE', `/${record.code}`)).status).toBe(200)
      for (const short of resolvers) expect((await short(pathOf(record))).status).toBe(410)
    })

    it('answers a PATCH and a DELETE only once a slow replica has applied them', async () => {
      // A replica that takes 300 ms to apply each change (a busy process): before the fence the
      // write was answered while the event was still on its way, and its next scan was stale.
      const bus = await createNatsBus(stack().env.NATS_URL!, 'slow-replica')
      const feed = createBusFeed(bus)
      const resolver = createResolver({
        feed: { lookup: feed.lookup, follow: (changed) => feed.follow(async (entry) => Bun.sleep(300).then(() => changed(entry))) },
        publishScan: () => undefined,
        trustProxy: 0,
        visitorHashKey: 'slow-replica',
      })
      const next = async (record: { code: string }) => {
        const res = await resolver.fetch(new Request(`http://short.test/${record.code}`, { headers: { 'user-agent': BROWSER } }))
        return res.status === 302 ? res.headers.get('location') : res.status
      }
      try {
        const own = await freshMember(stack())
        const api = (method: string, path: string, body?: unknown) => call(stack(), method, `/v1/dynqrcodes${path}`, { key: own.key, body })
        const [record] = (await api('POST', '', { destination_url: 'https://old.example/', name: 'Slow' })).body.created
        // Its first lookup reaches the dynamic service after its announcement on the same
        // connection; the wait covers a second dynamic replica (scaled out).
        expect(await next(record)).toBe('https://old.example/')
        await Bun.sleep(200)

        const started = performance.now()
        expect((await api('PATCH', `/${record.code}`, { destination_url: 'https://new.example/' })).status).toBe(200)
        expect(performance.now() - started).toBeGreaterThanOrEqual(250)
        expect(await next(record)).toBe('https://new.example/')
        expect((await api('PATCH', `/${record.code}`, { status: 'draft' })).status).toBe(200)
        expect(await next(record)).toBe(404)
        expect((await api('DELETE', `/${record.code}`)).status).toBe(200)
        expect(await next(record)).toBe(410)
      } finally {
        resolver.stop()
        await bus.close()
      }
    })
  })
}
