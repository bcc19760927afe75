import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type { AppError } from '@lr/proto'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { skipReason } from '../../test/harness/servers'
import { createNatsBus } from '@lr/platform/bus-nats'
import { beginShutdown } from '@lr/platform/shutdown-failures'
import { openSqlite } from '@lr/platform/sqlite'
import { withStoreMetrics } from '@lr/platform/store-metrics'
import { captureLog } from './log-capture'

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

    it('stops waiting for running handlers once in all: close after a stopServing that gave up does not wait again', async () => {
      const server = await createNatsBus(nats.url, 'server', { handlerWaitMs: 200 })
      const client = await createNatsBus(nats.url, 'client')
      server.serve('stuck.v1.get', () => Bun.sleep(1_500), { queue: 'stuck' })
      await server.connection.flush()
      const { lines, restore } = captureLog()
      try {
        void client.request('stuck.v1.get', {}, { timeoutMs: 1_000 }).catch(() => undefined)
        await Bun.sleep(50) // the handler is running
        await server.stopServing()
        const started = performance.now()
        await server.close()
        expect(performance.now() - started).toBeLessThan(500)
        expect(lines.filter((line) => line.msg === 'bus handlers still running at close')).toHaveLength(1)
      } finally {
        restore()
        await client.close()
      }
    })

    /**
     * What runServiceProcess does on SIGTERM, under a stream of requests: the bus stops serving
     * and gives up on the handlers still running, the store closes under them, the bus closes.
     * Returns every line logged meanwhile and how many handlers met the closed store.
     */
    async function stopUnderStream(shuttingDown: boolean) {
      const server = await createNatsBus(nats.url, 'server', { handlerWaitMs: 100 })
      const client = await createNatsBus(nats.url, 'client')
      const db = openSqlite(':memory:')
      db.exec('CREATE TABLE things (id TEXT PRIMARY KEY)')
      const store = withStoreMetrics('things', { find: async (id: string) => db.query('SELECT id FROM things WHERE id = ?').get(id) })
      let failed = 0
      server.serve('things.v1.get', async (payload) => {
        await Bun.sleep(300) // waits on a busy store
        return store.find((payload as { id: string }).id).catch((error: unknown) => {
          failed++
          throw error
        })
      }, { queue: 'things' })
      await server.connection.flush()
      const replies: Promise<unknown>[] = []
      const stream = setInterval(() => replies.push(client.request('things.v1.get', { id: 'a' }, { timeoutMs: 1_000 }).catch((error: AppError) => error.code)), 2)
      const { lines, restore } = captureLog()
      try {
        await Bun.sleep(200)
        const summarise = shuttingDown ? beginShutdown() : () => {}
        await server.stopServing()
        db.close()
        await server.close()
        clearInterval(stream)
        await Promise.all(replies)
        summarise()
        // Less `debug` lines (LOG_LEVEL=info writes none): those of LOG_LEVEL=info.
        return { lines: lines.filter((line) => line.msg !== 'bus request handled'), failed }
      } finally {
        clearInterval(stream)
        restore()
        await client.close()
      }
    }

    it('logs the failures of handlers whose store the stop closed as one line per kind, with their count', async () => {
      const { lines, failed } = await stopUnderStream(true)
      expect(failed).toBeGreaterThan(20)
      expect(lines.length).toBeLessThanOrEqual(4)
      expect(lines.map((line) => line.msg).sort()).toEqual(['bus handlers still running at close', 'failures caused by the shutdown'])
      expect(lines.find((line) => line.kind === 'store closed')).toMatchObject({ store: 'things', failures: failed, err: { type: 'RangeError', message: 'Cannot use a closed database' } })
    })

    it('logs each such failure as before when the process is not stopping', async () => {
      const { lines, failed } = await stopUnderStream(false)
      expect(failed).toBeGreaterThan(20)
      expect(lines.filter((line) => line.msg === 'bus handler failed')).toHaveLength(failed)
    })
  })
