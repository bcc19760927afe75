import { describe, expect, it } from 'bun:test'
import { connectMongo, STUCK_CHECK_MS } from '@lr/platform/mongo'
import { mongoSkipReason, startFerretDb } from '../../test/harness/ferretdb'
import { waitUntil } from '../../test/harness/ports'
import { startTcpProxy } from '../../test/harness/tcp-proxy'
import { captureLog } from './log-capture'

/**
 * A server that stops answering with its connections open (FerretDB frozen, SIGSTOP, for 15 s
 * under the scale-out stack): the watchdog closes the client and connects it again after
 * STUCK_CHECK_MS. Its close first ends the client's sessions on that server, so it waits until
 * the server answers again, past the 2 s the watchdog gives it; the connect meanwhile finds the
 * old connections still open. The late close then dropped them, and the client refused every
 * operation for good ('Client must be connected before running operations'): in the probe,
 * dynamic and webhooks answered 503 for the 9 minutes until they were restarted.
 * Since the server's silence clears the pool at SILENT_CHECK_MS, before the watchdog's close,
 * that close ends at once (its sessions' end finds no connection) and the watchdog connects
 * again only once the server answers: either way the client must serve again then.
 */
describe.skipIf(Boolean(mongoSkipReason()))('a MongoDB server that hangs, then answers again', () => {
  it('is used again once it answers, though the close of the hung client ended after the reconnection', async () => {
    const server = await startFerretDb()
    const proxy = await startTcpProxy(Number(new URL(server.url).port))
    const conn = await connectMongo(`mongodb://127.0.0.1:${proxy.port}/`)
    const log = captureLog()
    try {
      const things = conn.db!.collection<{ _id: string }>('frozen_things')
      await things.insertOne({ _id: 'a' }) // a session in the client's pool, which its close ends on the server
      // Every byte from now on is held, on every connection: the server is frozen.
      const held = proxy.holdFrom(new Uint8Array(0))
      void things.findOne({ _id: 'a' }).catch(() => undefined)
      await held
      const messages = () => log.lines.map((line) => line.msg as string)
      await waitUntil(async () => messages().includes('MongoDB: the check of the server has not ended; connecting again'), STUCK_CHECK_MS + 15_000, 'the watchdog to make the client again')
      await Bun.sleep(2_500) // past the 2 s the watchdog gives the close
      proxy.release() // it answers again: the close waiting on it ends
      await Bun.sleep(1_000)
      const read = async () => (await things.findOne({ _id: 'a' }))?._id
      await waitUntil(async () => (await read().catch(() => undefined)) === 'a', 15_000, 'a read answered after the server came back')
      expect(await read()).toBe('a')
    } finally {
      log.restore()
      await conn.close(true)
      await proxy.stop()
      await server.stop()
    }
  }, 60_000)
})
