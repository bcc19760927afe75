import { describe, expect, it } from 'bun:test'
import type { Connection } from 'mongoose'
import { AppError, loadConfig } from '@lr/proto'
import { connectMongo } from '@lr/platform/mongo'
import { openServiceStore } from '@lr/platform/store'
import { mongoSkipReason, startFerretDb } from '../../test/harness/ferretdb'
import { waitUntil } from '../../test/harness/ports'
import { captureLog } from './log-capture'

/** How a call ended, and when, in ms from `since`. */
const settled = (call: Promise<unknown>, since: number) =>
  call.then(
    () => ({ answer: 'ok', error: undefined as unknown, ms: performance.now() - since }),
    (error: unknown) => ({ answer: 'error', error, ms: performance.now() - since }),
  )
const asUnavailable = (error: unknown) => [(error as AppError).code, (error as AppError).status, (error as AppError).details?.retryAfter]

/**
 * A MongoDB server that stops answering with its connections open (FerretDB frozen: SIGSTOP).
 * Before, a call under way then waited for the watchdog's reconnection (12 s) or the driver's
 * own check to time out (30 s): an API request hung until the gateway's 10 s deadline and was a
 * 504, analytics' batch waited with it, and so did a graceful stop. Now the operations end once
 * the server has left a check unanswered SILENT_CHECK_MS (platform/src/mongo.ts): each call is
 * the store's 503, and readiness fails, until the server answers again.
 */
describe.skipIf(Boolean(mongoSkipReason()))('a MongoDB server that stops answering', () => {
  it('fails the call under way and every new one as unavailable (503) in bounded time, readiness too, and serves again once it answers', async () => {
    const server = await startFerretDb()
    const conn = await connectMongo(server.url)
    const log = captureLog()
    try {
      // A store as a service opens it (openServiceStore), on the process's shared connection.
      const thingStore = (conn: Connection) => {
        const things = conn.db!.collection<{ _id: string; n?: number }>('silent_things')
        return {
          find: async (id: string) => things.findOne({ _id: id }),
          bump: async (id: string) => void (await things.updateOne({ _id: id }, { $inc: { n: 1 } }, { upsert: true })),
          ping: async () => (await conn.db!.admin().ping().then(() => true, () => false)) && conn.readyState === 1,
        }
      }
      const config = loadConfig({ STORE: 'mongo', MONGODB_URL: server.url })
      const { store } = await openServiceStore(config, conn, { name: 'things', sqlite: () => { throw new Error('not SQLite') }, mongo: async () => async (conn) => thingStore(conn) })
      await store.bump('a')
      expect(await store.ping()).toBe(true)

      process.kill(server.pid!, 'SIGSTOP')
      const frozenAt = performance.now()
      const [read, write] = await Promise.all([settled(store.find('a'), frozenAt), settled(store.bump('a'), frozenAt)])
      // The next check starts within a second; SILENT_CHECK_MS later what waits on it ends. The
      // gateway gives up on a request after 10 s (a 504): the store's answer must come first.
      for (const call of [read, write]) {
        expect(call.answer).toBe('error')
        expect(asUnavailable(call.error)).toEqual(['unavailable', 503, 1])
        expect(call.ms).toBeLessThan(8_000) // SILENT_CHECK_MS (5 s), the next check (1 s), and room
      }
      // While it stays silent a new call fails at once, and readiness says so.
      const later = performance.now()
      const next = await settled(store.find('a'), later)
      expect([next.answer, ...asUnavailable(next.error)]).toEqual(['error', 'unavailable', 503, 1])
      expect(next.ms).toBeLessThan(1_000)
      expect(await store.ping()).toBe(false)
      expect(log.lines.filter((line) => line.msg.startsWith('MongoDB: the server has not answered'))).toEqual([
        expect.objectContaining({ msg: 'MongoDB: the server has not answered its check; its operations fail (503) until it answers' }),
      ])

      process.kill(server.pid!, 'SIGCONT')
      await waitUntil(async () => store.ping(), 10_000, 'the store to answer again')
      expect(log.lines.map((line) => line.msg)).toContain('MongoDB: the server answers again')
      // The write that failed was never reported as done: the count is what the server has,
      // one (before the freeze) or two (the failed write's command, held in the frozen
      // server's socket, ran as it woke up), and a new write adds one to it.
      const before = (await store.find('a'))?.n
      expect([1, 2]).toContain(before!)
      await store.bump('a')
      expect((await store.find('a'))?.n).toBe(before! + 1)
    } finally {
      log.restore()
      await conn.close(true)
      await server.stop()
    }
  }, 40_000)
})
