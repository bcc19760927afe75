import { afterAll, afterEach, beforeAll, describe, expect, it } from 'bun:test'
import { createNatsBus, type NatsBus } from '@lr/platform/bus-nats'
import { captureLog } from '@lr/platform/testing/log-capture'
import { dynamicChangedSubject } from '@lr/proto'
import { startNats, type NatsServer } from '../../../../test/harness/nats'
import { waitUntil } from '../../../../test/harness/ports'
import { skipReason } from '../../../../test/harness/servers'
import { startTcpProxy, type TcpProxy } from '../../../../test/harness/tcp-proxy'
import { serveDynamic } from '../../src/handlers'
import { createBusResolver } from '../../src/resolver/bus-feed'
import type { Resolver } from '../../src/resolver/resolver'
import { personal, setup } from '../fixtures'
import { BROWSER, KEY } from './fixtures'

/**
 * A resolver whose own NATS connection drops while the dynamic service keeps taking writes misses
 * their change events (no event is sent twice); the write is answered without it once it has not
 * answered in time (nats-settlers.ts). Once its connection is back it forgets every cached code,
 * so its next scan looks the code up: before, it served the old destination for up to 60 s.
 */
const skip = skipReason('nats-server')
describe.skipIf(skip !== null)(`a resolver whose NATS connection came back${skip ? ` (${skip})` : ''}`, () => {
  let nats: NatsServer
  let proxy: TcpProxy
  let dynamicBus: NatsBus
  let ctx: ReturnType<typeof setup>
  let stopServing: () => void
  const closing: (() => Promise<void> | void)[] = []

  beforeAll(async () => {
    nats = await startNats()
    proxy = await startTcpProxy(nats.port)
    // A missing resolver holds a write up to settleTimeoutMs: short here.
    dynamicBus = await createNatsBus(nats.url, 'dynamic', { settleTimeoutMs: 300 })
    ctx = setup({ announce: (entry, settled) => dynamicBus.publish(dynamicChangedSubject(entry.code), entry, { settled }) })
    stopServing = serveDynamic(dynamicBus, ctx.service)
  })
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
  })
  afterAll(async () => {
    stopServing?.()
    await dynamicBus?.close()
    ctx?.close()
    await proxy?.stop()
    await nats?.stop()
  })

  /** A resolver on a bus of its own: through the proxy, or straight to the server. */
  async function resolverAt(url: string) {
    const bus = await createNatsBus(url, 'resolver')
    const resolver: Resolver = createBusResolver({ bus, trustProxy: 0, visitorHashKey: KEY, publishScan: () => undefined })
    closing.push(() => bus.close(), () => resolver.stop())
    await bus.connection.flush()
    const scan = async (code: string) => {
      const res = await resolver.fetch(new Request(`http://short.test/${code}`, { headers: { 'user-agent': BROWSER } }))
      return res.status === 302 ? res.headers.get('location') : res.status
    }
    return { bus, scan }
  }
  const created = async (destination_url: string) => (await ctx.service.create(personal, { destination_url, name: 'Blip' })).created[0]!.code
  const lookups = () => ctx.calls.resolve ?? 0

  it('sends the next scan after the reconnect to a destination PATCHed while only its connection was cut, and logs what it forgot', async () => {
    const r = await resolverAt(`nats://127.0.0.1:${proxy.port}`)
    const code = await created('https://old.example/')
    expect(await r.scan(code)).toBe('https://old.example/')
    // Heard while connected: a PATCH is followed at once (it settles, no lookup).
    await ctx.service.update(personal, code, { destination_url: 'https://v1.example/' })
    expect(await r.scan(code)).toBe('https://v1.example/')

    const captured = captureLog()
    try {
      await proxy.cut()
      await waitUntil(async () => !(await r.bus.ping()), 5_000, 'the resolver to notice its connection is gone')
      await ctx.service.update(personal, code, { destination_url: 'https://new.example/' })
      // The write was answered without it, and it keeps answering from memory: the change never reached it.
      expect(captured.lines.filter((line) => line.msg.startsWith('a subscriber did not settle'))).toHaveLength(1)
      expect(await r.scan(code)).toBe('https://v1.example/')

      await proxy.reopen()
      await waitUntil(() => r.bus.ping(), 10_000, 'the resolver to reconnect')
      const before = lookups()
      expect(await r.scan(code)).toBe('https://new.example/')
      expect(lookups()).toBe(before + 1)
      expect(captured.lines.filter((line) => line.msg.startsWith('bus reconnected'))).toEqual([{ codes: 1, msg: 'bus reconnected: cached codes forgotten, each is looked up again at its next scan' }])
    } finally {
      captured.restore()
    }
    // Following change events again.
    await ctx.service.update(personal, code, { destination_url: 'https://after.example/' })
    expect(await r.scan(code)).toBe('https://after.example/')
  }, 20_000)

  it('still answers a code as before while the dynamic service is away, after its connection dropped twice before the code was scanned again', async () => {
    const r = await resolverAt(`nats://127.0.0.1:${proxy.port}`)
    const code = await created('https://kept.example/')
    expect(await r.scan(code)).toBe('https://kept.example/')

    const captured = captureLog()
    try {
      // A flapping link: two reconnects, and no scan of the code in between.
      for (const _ of [1, 2]) {
        await proxy.cut()
        await waitUntil(async () => !(await r.bus.ping()), 5_000, 'the resolver to notice its connection is gone')
        await proxy.reopen()
        await waitUntil(() => r.bus.ping(), 10_000, 'the resolver to reconnect')
      }
      await waitUntil(() => captured.lines.filter((line) => line.msg.startsWith('bus reconnected')).length === 2, 5_000, 'both reconnects to be heard')
    } finally {
      captured.restore()
    }
    // The dynamic service is away: the lookup fails, and the answer the resolver had is served
    // (README "The short-link resolver"). Before, the second reconnect dropped it: a 503.
    stopServing()
    try {
      expect(await r.scan(code)).toBe('https://kept.example/')
    } finally {
      stopServing = serveDynamic(dynamicBus, ctx.service)
    }
  }, 30_000)

  it('looks every cached code up again after the server restarts', async () => {
    const r = await resolverAt(nats.url)
    const codes = [await created('https://one.example/'), await created('https://two.example/')]
    for (const code of codes) await r.scan(code)
    const cached = lookups()
    for (const code of codes) await r.scan(code)
    expect(lookups()).toBe(cached)

    const captured = captureLog()
    try {
      await nats.down()
      await waitUntil(async () => !(await r.bus.ping()), 5_000, 'the resolver to notice the server is gone')
      await nats.up()
      await waitUntil(async () => (await r.bus.ping()) && (await dynamicBus.ping()), 10_000, 'both buses to reconnect')
      expect([await r.scan(codes[0]!), await r.scan(codes[1]!)]).toEqual(['https://one.example/', 'https://two.example/'])
      expect(lookups()).toBe(cached + 2)
      expect(captured.lines.filter((line) => line.msg.startsWith('bus reconnected'))).toEqual([{ codes: 2, msg: 'bus reconnected: cached codes forgotten, each is looked up again at its next scan' }])
    } finally {
      captured.restore()
    }
  }, 20_000)
})
