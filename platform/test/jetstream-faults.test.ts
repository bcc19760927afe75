import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect, type NatsConnection } from 'nats'
import { streamRestorer } from '@lr/platform/jetstream-faults'
import { type NatsServer, startNats } from '../../test/harness/nats'
import { skipReason } from '../../test/harness/servers'
import { waitUntil } from '../../test/harness/ports'
import { captureLog } from './log-capture'

const skip = skipReason('nats-server')
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
      expect(log.lines.map((line) => line.msg)).toEqual(['JetStream does not answer on the NATS server (503: not enabled, or not available): the stream SCAN_BATCHES cannot be made yet'])
    } finally {
      log.restore()
    }
  })
})
