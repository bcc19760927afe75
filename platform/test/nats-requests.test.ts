import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect, ErrorCode, type NatsConnection } from 'nats'
import { createNatsRequests, NoReply } from '@lr/platform/nats-requests'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { skipReason } from '../../test/harness/servers'

const encoder = new TextEncoder()
const text = (data: Uint8Array) => new TextDecoder().decode(data)

const skip = skipReason('nats-server')
if (skip) describe.skip(`NATS requests on one reply subscription (${skip})`, () => {})
else
  describe('NATS requests on one reply subscription', () => {
    let server: NatsServer
    let nc: NatsConnection
    let requests: ReturnType<typeof createNatsRequests>

    beforeAll(async () => {
      server = await startNats()
      nc = await connect({ servers: server.url })
      // An echo that answers later the larger its number: replies come back out of order.
      nc.subscribe('echo', { callback: (_, msg) => void setTimeout(() => msg.respond(msg.data), Number(text(msg.data)) % 7) })
      nc.subscribe('slow', { callback: (_, msg) => void setTimeout(() => msg.respond(msg.data), 150) })
      await nc.flush()
      requests = createNatsRequests(nc)
    })
    afterAll(async () => {
      await nc?.close()
      await server?.stop()
    })

    it('answers each of many concurrent requests with its own reply, whatever order the replies come in, and keeps none waiting', async () => {
      const sent = Array.from({ length: 300 }, (_, i) => String(i))
      const answers = await Promise.all(sent.map((body) => requests.request('echo', encoder.encode(body), 5_000)))
      expect(answers.map(text)).toEqual(sent)
      expect(requests.waiting).toBe(0)
    })

    it('rejects with no responders at once when nothing serves the subject', async () => {
      const started = performance.now()
      const error = await requests.request('nobody.here', encoder.encode('x'), 5_000).catch((e) => e)
      expect(error).toBeInstanceOf(NoReply)
      expect(error.code).toBe(ErrorCode.NoResponders)
      expect(performance.now() - started).toBeLessThan(2_500)
    })

    it('rejects with a timeout, and drops the reply that comes after it', async () => {
      const error = await requests.request('slow', encoder.encode('late'), 30).catch((e) => e)
      expect(error).toBeInstanceOf(NoReply)
      expect(error.code).toBe(ErrorCode.Timeout)
      expect(requests.waiting).toBe(0)
      await Bun.sleep(200) // the slow reply arrives now, for no request
      expect(requests.waiting).toBe(0)
      expect(text(await requests.request('echo', encoder.encode('1'), 5_000))).toBe('1')
    })

    it('fails every waiting request with the error failAll is given (the connection dropped)', async () => {
      const pending = [requests.request('slow', encoder.encode('a'), 5_000), requests.request('slow', encoder.encode('b'), 5_000)]
      expect(requests.waiting).toBe(2)
      const dropped = new Error('dropped')
      requests.failAll(dropped)
      expect(await Promise.allSettled(pending)).toEqual([{ status: 'rejected', reason: dropped }, { status: 'rejected', reason: dropped }])
      expect(requests.waiting).toBe(0)
    })
  })
