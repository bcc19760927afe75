import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect, DiscardPolicy, type NatsConnection } from 'nats'
import { streamRestorer } from '@lr/platform/jetstream-faults'
import { durableStream } from '@lr/platform/jetstream-streams'
import { errorFields } from '@lr/platform/log'
import { type NatsServer, startNats } from '../../test/harness/nats'
import { skipReason } from '../../test/harness/servers'
import { waitUntil } from '../../test/harness/ports'
import { captureLog } from './log-capture'
import { useScanStreams } from './scan-streams.fixture'

const skip = skipReason('nats-server')
const NO_JETSTREAM =
  'JetStream does not answer on the NATS server (503: not enabled, or not available): the stream SCAN_BATCHES cannot be made yet; start nats-server with -js (or a jetstream block in its configuration)'
if (skip) console.warn(`skipping the JetStream faults suite: ${skip}`)

describe.skipIf(Boolean(skip))('streamRestorer on a NATS server without JetStream', () => {
  let server: NatsServer
  let nc: NatsConnection
  beforeAll(async () => {
    server = await startNats()
    nc = await connect({ servers: server.url })
  })
  afterAll(async () => {
    await nc.close()
    await server.stop()
  })

  it('says that JetStream does not answer, not that the stream is missing', async () => {
    const log = captureLog()
    try {
      streamRestorer(nc, 'SCAN_BATCHES', async () => true)()
      await waitUntil(() => log.lines.length > 0, 5000)
      expect(log.lines.map((line) => line.msg)).toEqual([NO_JETSTREAM])
    } finally {
      log.restore()
    }
  })

  it('says so once per 10 s, not at every try (once a second, for as long as the server runs without it)', async () => {
    const log = captureLog()
    try {
      const restore = streamRestorer(nc, 'SCAN_BATCHES', async () => true)
      for (const started = Date.now(); Date.now() - started < 2_500; await Bun.sleep(100)) restore()
      await Bun.sleep(200)
      expect(log.lines.map((line) => line.msg)).toEqual([NO_JETSTREAM])
    } finally {
      log.restore()
    }
  })
})

describe.skipIf(Boolean(skip))('a JetStream refusal in the log (real nats-server -js)', () => {
  const streams = useScanStreams()

  it('names the broker\'s reason, not only its status (a full store: `insufficient resources`)', async () => {
    await streams.jsm.streams.add({ ...durableStream('FULL', ['full.>']), max_msgs: 1, discard: DiscardPolicy.New })
    const js = streams.nc.jetstream()
    await js.publish('full.a', 'first')
    const refused = await js.publish('full.a', 'second').catch((error: unknown) => error)
    expect(errorFields(refused).err.message).toBe('503: maximum messages exceeded')
    expect(errorFields(new Error('plain')).err.message).toBe('plain')
  })
})
