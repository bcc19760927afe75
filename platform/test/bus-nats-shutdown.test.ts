import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { skipReason } from '../../test/harness/servers'
import { createNatsBus } from '@lr/platform/bus-nats'

/** What a serving process's bus does on SIGTERM (runServiceProcess): stopServing, then close. */
const skip = skipReason('nats-server')
let nats: NatsServer

beforeAll(async () => {
  if (!skip) nats = await startNats()
})
afterAll(async () => {
  await nats?.stop()
})

if (skip) describe.skip(`NATS bus shutdown (${skip})`, () => it('drains', () => {}))
else
  describe('NATS bus shutdown', () => {
    it('answers a request whose handler is still running when the serving bus closes', async () => {
      const server = await createNatsBus(nats.url, 'server')
      const client = await createNatsBus(nats.url, 'client')
      let started!: () => void
      const running = new Promise<void>((resolve) => (started = resolve))
      server.serve('slow.v1.get', async () => {
        started()
        await Bun.sleep(300)
        return { done: true }
      }, { queue: 'slow' })
      await server.connection.flush() // the server knows the subscription
      const reply = client.request('slow.v1.get', {}, { timeoutMs: 3000 })
      await running
      await server.close()
      expect(await reply).toEqual({ done: true })
      await client.close()
    })

    it('takes no new request after stopServing, while its own requests and publishes still work', async () => {
      const leaving = await createNatsBus(nats.url, 'leaving')
      const staying = await createNatsBus(nats.url, 'staying')
      const client = await createNatsBus(nats.url, 'client')
      leaving.serve('echo.v1.get', async () => 'leaving', { queue: 'echo' })
      staying.serve('echo.v1.get', async () => 'staying', { queue: 'echo' })
      staying.serve('other.v1.get', async () => 'other', { queue: 'other' })
      await Promise.all([leaving.connection.flush(), staying.connection.flush()])
      await leaving.stopServing()
      const answers = await Promise.all(Array.from({ length: 20 }, () => client.request('echo.v1.get', {})))
      expect(new Set(answers)).toEqual(new Set(['staying']))
      expect(await leaving.request('other.v1.get', {})).toBe('other')
      await Promise.all([leaving.close(), staying.close(), client.close()])
    })

    it('lets an event handler that is running finish before the connection closes', async () => {
      const listener = await createNatsBus(nats.url, 'listener')
      const publisher = await createNatsBus(nats.url, 'publisher')
      const handled: string[] = []
      let started!: () => void
      const running = new Promise<void>((resolve) => (started = resolve))
      listener.subscribe('events.>', async (_event, subject) => {
        started()
        await Bun.sleep(200)
        await listener.publish('events-done.x', {})
        handled.push(subject)
      })
      await listener.connection.flush()
      await publisher.publish('events.one', {})
      await running
      await listener.close()
      expect(handled).toEqual(['events.one'])
      await publisher.close()
    })
  })
