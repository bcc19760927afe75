import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { connect, type NatsConnection } from 'nats'
import { acquireIngestLease, LEASE_BUCKET } from '@lr/platform/ingest-lease'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { captureLog } from './log-capture'

describe.skipIf(Boolean(skipReason('nats-server')))('the ingest lease', () => {
  let server: NatsServer
  let nc: NatsConnection
  beforeAll(async () => {
    server = await startNats({ jetstream: true })
    nc = await connect({ servers: server.url })
  })
  afterAll(async () => {
    await nc?.close()
    await server?.stop()
  })

  it('is one replica\'s at a time, and passes to the other when released', async () => {
    const first = await acquireIngestLease(nc, { ttlMs: 400, holder: 'first' })
    const second = await acquireIngestLease(nc, { ttlMs: 400, holder: 'second' })
    expect([first.held(), second.held()]).toEqual([true, false])
    await first.release()
    await waitUntil(() => second.held(), 3000, 'the second replica to take the lease')
    await second.release()
  })

  it('is not held by a holder paused past its ttl, from the moment it wakes (its renewal has not run yet)', async () => {
    const lease = await acquireIngestLease(nc, { ttlMs: 400, holder: 'paused' })
    try {
      expect(lease.held()).toBe(true)
      // The whole process stops (SIGSTOP, a frozen VM): no timer runs, the server expires the entry.
      Bun.sleepSync(900)
      expect(lease.held()).toBe(false)
      // Nobody took it meanwhile: the holder takes it again at its next renewals.
      await waitUntil(() => lease.held(), 3000, 'the lease to be taken again')
    } finally {
      await lease.release()
    }
  })

  it('is taken again when its bucket is gone (a broker that lost its JetStream store): scans do not stop for good', async () => {
    const log = captureLog()
    const lease = await acquireIngestLease(nc, { ttlMs: 400, holder: 'holder' })
    try {
      expect(lease.held()).toBe(true)
      await (await nc.jetstreamManager()).streams.delete(`KV_${LEASE_BUCKET}`)
      await waitUntil(() => !lease.held(), 3000, 'the lease to be lost with its bucket')
      await waitUntil(() => lease.held(), 5000, 'the lease to be taken again in a bucket made again')
      expect(log.lines.map((line) => line.msg)).toContain('the ingest lease bucket was missing: made it again')
    } finally {
      log.restore()
      await lease.release()
    }
  })
})
