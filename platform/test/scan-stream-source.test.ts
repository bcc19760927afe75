import { afterEach, beforeAll, beforeEach, describe, expect, it, setSystemTime } from 'bun:test'
import { connect, type JetStreamManager, type KV, type NatsConnection } from 'nats'
import type { Subprocess } from 'bun'
import { type NatsServer, startNats } from '../../test/harness/nats'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'
import { createJetStreamScanSource } from '@lr/platform/scan-stream-source'
import { LEASE_BUCKET } from '@lr/platform/ingest-lease'
import { SCAN_BATCH_STREAM, SCAN_BATCH_SUBJECT } from '@lr/platform/scan-stream-config'
import type { ScanEvent } from '@lr/proto'
import { captureLog } from './log-capture'
import { event, ids, range, useScanStreams } from './scan-streams.fixture'

// Analytics' side of SCAN_BATCHES: the durable consumer `analytics` and what it hands to apply.
const skip = skipReason('nats-server')
if (skip) describe.skip(`scan source on JetStream (${skip})`, () => {})
else
  describe('scan source on JetStream (real nats-server -js)', () => {
    const streams = useScanStreams()
    let server: NatsServer
    let nc: NatsConnection
    let jsm: JetStreamManager
    beforeAll(() => void ({ server, nc, jsm } = streams))

    describe('createJetStreamScanSource', () => {
      let consumed: unknown[]
      const collect = async (events: unknown[]) => void consumed.push(...events)
      beforeEach(() => {
        consumed = []
      })
      afterEach(() => jsm.consumers.delete(SCAN_BATCH_STREAM, 'analytics').catch(() => false))

      async function publishAll(events: ScanEvent[]) {
        const publisher = createJetStreamScanPublisher(nc)
        for (const e of events) publisher.publish(e)
        await publisher.flush()
      }

      it('applies every scan, also those stored before it started, and acknowledges them', async () => {
        await publishAll(range(1, 5))
        const source = createJetStreamScanSource(nc)
        await source.start(collect)
        await publishAll(range(6, 10))
        await waitUntil(() => consumed.length === 10, 5_000, 'ten scans')
        await source.stop()
        expect(ids(consumed)).toEqual(ids(range(1, 10)))
        const info = await jsm.consumers.info(SCAN_BATCH_STREAM, 'analytics')
        expect([info.num_pending, info.num_ack_pending]).toEqual([0, 0])
      })

      it('hands the scans a crashed consumer held to another within 5 s', async () => {
        // The crashed replica: its own connection, a store that never commits, no stop() at all.
        const doomed = await connect({ servers: server.url })
        const stuck = createJetStreamScanSource(doomed)
        let held = 0
        await stuck.start(async (events) => {
          held += events.length
          await new Promise(() => undefined)
        })
        await publishAll(range(1, 50))
        await waitUntil(() => held > 0, 5_000, 'the doomed consumer to hold scans')
        const survivor = createJetStreamScanSource(nc)
        await survivor.start(collect)
        const crashedAt = performance.now()
        await doomed.close() // its process is gone: no ack, no nak, no in-progress ack any more
        await waitUntil(() => new Set(ids(consumed)).size === 50, 5_000, 'every held scan on the survivor')
        expect(performance.now() - crashedAt).toBeLessThan(5_000)
        await survivor.stop()
      }, 15_000)

      it('applies nothing after a pause past its lease until it holds the lease again (a replica frozen, then resumed)', async () => {
        // The pause: this replica's whole process stops (SIGSTOP, a frozen VM) once, with scans in
        // hand. Meanwhile the server lets its lease expire and another replica may take it and the
        // scans; so what it applies after waking must be under a lease it holds again.
        const leaseTtlMs = 500
        let pauseNext = false
        let paused = false
        const pace = async () => {
          if (!pauseNext) return
          pauseNext = false
          paused = true
          Bun.sleepSync(leaseTtlMs * 2 + 1_000)
        }
        const underLease: boolean[] = []
        const source = createJetStreamScanSource(nc, { leaseTtlMs, pace })
        let kv: KV | undefined
        await source.start(async (events) => {
          underLease.push((await kv!.get('holder'))?.operation === 'PUT')
          consumed.push(...events)
        })
        // Opened once the source made it, with the lease's max age.
        kv = await nc.jetstream().views.kv(LEASE_BUCKET)
        await publishAll(range(1, 5))
        await waitUntil(() => consumed.length === 5, 5_000, 'five scans')
        pauseNext = true
        await publishAll(range(6, 10))
        await waitUntil(() => new Set(ids(consumed)).size === 10 && paused, 10_000, 'the scans published before the pause')
        await source.stop()
        expect(underLease.every(Boolean)).toBe(true)
        expect(ids(consumed).sort()).toEqual(ids(range(1, 10)).sort())
      }, 20_000)

      it('keeps scans it holds longer than the ack wait (a slow store) without a redelivery', async () => {
        const slowSource = createJetStreamScanSource(nc, { ackWaitMs: 1_000 })
        const applied: string[] = []
        await slowSource.start(async (events) => {
          await Bun.sleep(2_500)
          applied.push(...ids(events))
        })
        await publishAll(range(1, 5))
        await waitUntil(() => applied.length >= 5, 10_000, 'the slow batch')
        await Bun.sleep(1_500)
        await slowSource.stop()
        expect(applied.sort()).toEqual(ids(range(1, 5)).sort())
        const info = await jsm.consumers.info(SCAN_BATCH_STREAM, 'analytics')
        expect(info.num_redelivered).toBe(0)
      }, 20_000)

      it('resumes after a stop with exactly the scans published meanwhile', async () => {
        const first = createJetStreamScanSource(nc)
        await first.start(collect)
        await publishAll(range(1, 20))
        await waitUntil(() => consumed.length === 20, 5_000, 'twenty scans')
        await first.stop()
        await publishAll(range(21, 30))
        const second = createJetStreamScanSource(nc)
        await second.start(collect)
        await waitUntil(() => consumed.length >= 30, 5_000, 'thirty scans')
        await Bun.sleep(200)
        await second.stop()
        expect(ids(consumed)).toEqual(ids(range(1, 30)))
      })

      it('delivers a batch again when applying it failed', async () => {
        let attempts = 0
        const source = createJetStreamScanSource(nc, { retryMs: 50 })
        await source.start(async (events) => {
          if (++attempts === 1) throw new Error('store busy')
          consumed.push(...events)
        })
        await publishAll([event(1)])
        await waitUntil(() => consumed.length === 1, 5_000, 'the redelivered scan')
        await source.stop()
        expect([attempts, ids(consumed)]).toEqual([2, ['scan-1']])
      })

      it('hands a malformed message (not JSON, or not an array) over as null, so it is acknowledged with its batch', async () => {
        const source = createJetStreamScanSource(nc)
        await source.start(collect)
        await nc.jetstream().publish(SCAN_BATCH_SUBJECT, new TextEncoder().encode('{not json'))
        await nc.jetstream().publish(SCAN_BATCH_SUBJECT, new TextEncoder().encode(JSON.stringify(event(1))))
        await waitUntil(() => consumed.length === 2, 5_000, 'the malformed messages')
        await source.stop()
        expect(consumed).toEqual([null, null])
        expect((await jsm.consumers.info(SCAN_BATCH_STREAM, 'analytics')).num_ack_pending).toBe(0)
      })

      it('holds a pull\'s worth of messages while it applies slowly, leaving the rest in the stream', async () => {
        const source = createJetStreamScanSource(nc, { maxFetch: 5, maxBatch: 1 })
        await source.start(async (events) => {
          await Bun.sleep(50)
          consumed.push(...events)
        })
        for (let n = 1; n <= 30; n++) await publishAll([event(n)]) // thirty messages
        await Bun.sleep(300)
        const held = await jsm.consumers.info(SCAN_BATCH_STREAM, 'analytics')
        await waitUntil(() => consumed.length === 30, 10_000, 'every scan')
        await source.stop()
        expect(held.num_ack_pending).toBeLessThanOrEqual(11) // one applying, five waiting, one pull's five
        expect(held.num_pending).toBeGreaterThan(0)
        expect(ids(consumed)).toEqual(ids(range(1, 30)))
      })

      it('says it is behind once its oldest unapplied batch waited over 100 ms, and caught up once all is applied', async () => {
        const told: [boolean, number][] = []
        for (let n = 1; n <= 3; n++) await publishAll([event(n)]) // three messages, applied one at a time
        const source = createJetStreamScanSource(nc, { maxBatch: 1, onBacklog: (behind) => told.push([behind, consumed.length]) })
        await source.start(async (events) => {
          await Bun.sleep(300) // a store slower than the scans come
          consumed.push(...events)
        })
        await waitUntil(() => consumed.length === 3, 10_000, 'three scans')
        await waitUntil(() => told.length === 2, 2_000, 'caught up')
        await source.stop()
        // Behind while the second batch waited for the first (at the latest); caught up after the last.
        expect(told[0]![0]).toBe(true)
        expect(told[0]![1]).toBeLessThan(3)
        expect(told[1]).toEqual([false, 3])
      })

      it('does not say it is behind while its store refuses scans', async () => {
        // [behind, refusals so far, still refusing]: before the first refusal it cannot know (a
        // batch that came late may count as behind); after it, redeliveries are old but no work
        // for the CPU. Once the store is back, the redelivered scans are a backlog like any other.
        const told: [boolean, number, boolean][] = []
        let refusals = 0
        let refusing = true
        const log = captureLog()
        try {
          const source = createJetStreamScanSource(nc, { retryMs: 200, onBacklog: (behind) => told.push([behind, refusals, refusing]) })
          await source.start(async (events) => {
            if (refusing) throw new Error(`store down (${++refusals})`)
            consumed.push(...events)
          })
          for (let n = 1; n <= 3; n++) await publishAll([event(n)])
          await Bun.sleep(1_000) // redelivered every 200 ms, each time older than 100 ms
          refusing = false
          await waitUntil(() => consumed.length === 3, 5_000, 'three scans once the store is back')
          await source.stop()
        } finally {
          log.restore()
        }
        expect(refusals).toBeGreaterThan(3)
        expect(told.filter(([behind, after, stillRefusing]) => behind && after > 0 && stillRefusing)).toEqual([])
        // Refused every 200 ms: one line for them all (at most one per 10 s), one when it ends.
        expect(log.lines.filter((line) => line.msg === 'scans not applied, redelivering')).toEqual([expect.objectContaining({ source: 'analytics', err: expect.objectContaining({ message: 'store down (1)' }) })])
        expect(log.lines.filter((line) => line.msg === 'scans applied again')).toEqual([expect.objectContaining({ refused: refusals })])
      })

      // Behind is measured in this process, never against the stream's timestamps (the NATS
      // server's clock): a process whose clock runs ahead would otherwise be behind for good.
      for (const [skewMs, where] of [[0, ''], [1_000, ', where this process\'s clock runs a second ahead of the server\'s']] as const)
        it(`never says it is behind while it keeps up${where}`, async () => {
          const told: boolean[] = []
          if (skewMs) setSystemTime(new Date(Date.now() + skewMs))
          try {
            const source = createJetStreamScanSource(nc, { onBacklog: (behind) => told.push(behind) })
            await source.start(collect)
            for (let n = 1; n <= 20; n++) {
              await publishAll([event(n)])
              await Bun.sleep(10)
            }
            await waitUntil(() => consumed.length === 20, 5_000, 'twenty scans')
            await source.stop()
          } finally {
            setSystemTime()
          }
          expect(told).toEqual([])
        })


      it('says it is behind at once when a backlog fills half the room of a pull', async () => {
        const told: [boolean, number][] = []
        for (let n = 1; n <= 120; n++) await publishAll([event(n)]) // 120 messages stored before it starts
        const source = createJetStreamScanSource(nc, { maxFetch: 20, maxBatch: 1, onBacklog: (behind) => told.push([behind, consumed.length]) })
        await source.start(collect)
        await waitUntil(() => consumed.length === 120, 10_000, 'every scan')
        await waitUntil(() => told.at(-1)?.[0] === false, 2_000, 'caught up')
        await source.stop()
        expect(told[0]).toEqual([true, 0])
      })

      it('applies up to maxBatch scans in one call, from as many messages as it takes', async () => {
        const calls: number[] = []
        await publishAll(range(1, 2000)) // batches of up to 500 scans
        const source = createJetStreamScanSource(nc, { maxBatch: 1000 })
        await source.start(async (events) => {
          calls.push(events.length)
          consumed.push(...events)
        })
        await waitUntil(() => consumed.length === 2000, 5_000, 'every scan')
        await source.stop()
        expect(ids(consumed)).toEqual(ids(range(1, 2000)))
        expect(calls.length).toBeLessThan(2000 / 500 + 1)
        expect(Math.max(...calls)).toBeLessThanOrEqual(1000 + 499)
      })
    })

    // The broker restarted without JetStream: every pull fails until it is back. That had been a
    // `warn` line with its stack at every retry (each second), for as long as it lasted.
    it('says that pulls fail once per 10 s while JetStream does not answer, not at every retry', async () => {
      const own = await startNats({ jetstream: true })
      const conn = await connect({ servers: own.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 })
      const log = captureLog()
      const source = createJetStreamScanSource(conn, { retryMs: 100, pullExpiresMs: 200, singleWriter: false })
      let plain: Subprocess | undefined
      try {
        await source.start(async () => {})
        await own.down()
        plain = Bun.spawn(['nats-server', '-a', '127.0.0.1', '-p', String(own.port)], { stdout: 'ignore', stderr: 'ignore' })
        await waitUntil(() => log.lines.some((line) => line.msg === 'pulling scans failed, retrying'), 10_000, 'a failed pull')
        await Bun.sleep(2_000)
        expect(log.lines.filter((line) => line.msg === 'pulling scans failed, retrying').length).toBe(1)
      } finally {
        log.restore()
        plain?.kill()
        await source.stop()
        await conn.close()
        await own.stop()
      }
    }, 20_000)
  })
