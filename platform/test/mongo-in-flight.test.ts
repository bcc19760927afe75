import { describe, expect, it } from 'bun:test'
import { connectMongo } from '@lr/platform/mongo'
import { mongoSkipReason, startFerretDb } from '../../test/harness/ferretdb'
import { startTcpProxy } from '../../test/harness/tcp-proxy'

/**
 * An operation in flight when the server goes away must end. Under Bun, a connection whose server
 * stopped could miss its socket's close: the operation then waited for ever (a fresh-clone CI run
 * hung 30 s in store-errors.test.ts; a probe, 1 stop of FerretDB in 15-40), though every check
 * of the server after it failed. Here a relay keeps that one connection open and silent while
 * the server refuses every other: the driver clears its pool on the failed check but, for a
 * refused connection (not a timeout), leaves the operations in use on it waiting.
 */
describe.skipIf(Boolean(mongoSkipReason()))('a MongoDB operation in flight as the server goes away', () => {
  it('fails once a check of the server fails, instead of waiting for ever on its connection', async () => {
    const server = await startFerretDb()
    const proxy = await startTcpProxy(Number(new URL(server.url).port))
    const conn = await connectMongo(`mongodb://127.0.0.1:${proxy.port}/`)
    try {
      const things = conn.db!.collection<{ _id: string }>('stuck_things')
      await things.insertOne({ _id: 'a' })
      const held = proxy.holdFrom(new TextEncoder().encode('stuck_things'))
      const started = performance.now()
      const outcome = things.findOne({ _id: 'a' }).then(() => 'answered', (error: Error) => error.name)
      await held
      await proxy.cutIdle()
      // The monitor checks every 10 s; the driver's retry of the read then waits 5 s for a server.
      const result = await Promise.race([outcome, Bun.sleep(25_000).then(() => 'still waiting')])
      expect(result).toMatch(/^Mongo\w*Error$/)
      expect(performance.now() - started).toBeLessThan(25_000)
    } finally {
      await conn.close(true)
      await proxy.stop()
      await server.stop()
    }
  }, 40_000)
})
