import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { AppError } from '@lr/proto'
import { createNatsBus, type NatsBus } from '@lr/platform/bus-nats'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'

/** A request while the broker is away fails at once (503), not after its timeout; it works again once the broker is back. */
const skip = skipReason('nats-server')
if (skip) describe.skip(`NATS bus without its server (${skip})`, () => {})
else
  describe('NATS bus without its server', () => {
    let nats: NatsServer
    let server: NatsBus
    let client: NatsBus
    beforeAll(async () => {
      nats = await startNats()
      server = await createNatsBus(nats.url, 'server')
      client = await createNatsBus(nats.url, 'client')
      server.serve('echo.v1.get', async (payload) => payload, { queue: 'echo' })
      await server.connection.flush()
    })
    afterAll(async () => {
      await client?.close()
      await server?.close()
      await nats?.stop()
    })

    it('connects as every process does: reconnecting for ever, a quarter second apart, without nats.js\'s async traces (an Error made per request)', () => {
      const { options } = client.connection as unknown as { options: Record<string, unknown> }
      expect(options).toMatchObject({ name: 'client', maxReconnectAttempts: -1, reconnectTimeWait: 250, noAsyncTraces: true, pingInterval: 2_000, maxPingOut: 2 })
    })

    it('refuses a request as unavailable within a second while the server is down', async () => {
      await nats.down()
      const started = performance.now()
      const error = await client.request('echo.v1.get', { n: 1 }).catch((e: unknown) => e)
      expect(performance.now() - started).toBeLessThan(1_000)
      expect(error).toBeInstanceOf(AppError)
      expect([(error as AppError).code, (error as AppError).details?.retryAfter]).toEqual(['unavailable', 1])
    })

    it('fails a request already waiting when the connection drops', async () => {
      await nats.up()
      await waitUntil(async () => (await client.request('echo.v1.get', 1).catch(() => null)) === 1, 10_000, 'the client to reconnect')
      server.serve('slow.v1.get', () => Bun.sleep(5_000), { queue: 'slow' })
      await server.connection.flush()
      const started = performance.now()
      const waiting = client.request('slow.v1.get', {}).catch((e: unknown) => e)
      await Bun.sleep(100)
      await nats.down()
      expect(((await waiting) as AppError).code).toBe('unavailable')
      expect(performance.now() - started).toBeLessThan(1_500)
    })

    it('answers again once the server is back', async () => {
      await nats.up()
      await waitUntil(async () => (await client.request('echo.v1.get', 2).catch(() => null)) === 2, 10_000, 'the client to reconnect')
    })

    it('notices a broker that hangs with its sockets open within seconds: requests are then a 503 at once, not a 504 after 10 s', async () => {
      await nats.freeze()
      try {
        // The pings (every 2 s, two missed) tell the client the connection is gone.
        await waitUntil(async () => {
          const started = performance.now()
          const error = await client.request('echo.v1.get', 3, { timeoutMs: 2_000 }).catch((e: unknown) => e)
          return (error as AppError)?.code === 'unavailable' && performance.now() - started < 500
        }, 12_000, 'a request to be refused at once while the broker hangs')
      } finally {
        nats.thaw()
      }
      await waitUntil(async () => (await client.request('echo.v1.get', 4).catch(() => null)) === 4, 20_000, 'the client to reconnect once the broker answers')
    }, 40_000)
  })
