import { afterEach, beforeAll, describe, expect, it } from 'bun:test'
import { AckPolicy, DiscardPolicy, type JetStreamManager, type NatsConnection } from 'nats'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'
import { createScanRelay } from '@lr/platform/scan-relay'
import { SCAN_BATCH_STREAM, SCAN_BATCH_SUBJECT, SCAN_STREAM } from '@lr/platform/scan-stream-config'
import type { ScanEvent } from '@lr/proto'
import { captureLog } from './log-capture'
import { event as scanOf, useScanStreams } from './scan-streams.fixture'

/** Scan n, of one of three codes. */
const event = (n: number): ScanEvent => scanOf(n, `Code000${n % 3}`)
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => event(from + i))
const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))

const skip = skipReason('nats-server')
if (skip) describe.skip(`scan relay SCAN_BATCHES -> SCANS (${skip})`, () => {})
else
  describe('scan relay SCAN_BATCHES -> SCANS (real nats-server -js)', () => {
    const streams = useScanStreams()
    let nc: NatsConnection
    let jsm: JetStreamManager
    beforeAll(() => void ({ nc, jsm } = streams))

    /** Every message of SCANS: subject, Nats-Msg-Id and body, in stream order. */
    async function relayed(): Promise<{ subject: string; id: string; scan: ScanEvent }[]> {
      const { first_seq, last_seq, messages } = (await jsm.streams.info(SCAN_STREAM)).state
      const out = []
      for (let seq = first_seq; messages > 0 && seq <= last_seq; seq++) {
        const msg = await jsm.streams.getMessage(SCAN_STREAM, { seq })
        out.push({ subject: msg.subject, id: msg.header.get('Nats-Msg-Id'), scan: msg.json<ScanEvent>() })
      }
      return out
    }
    const relayedCount = async () => (await jsm.streams.info(SCAN_STREAM)).state.messages
    const ids = (scans: { scan: ScanEvent }[]) => scans.map((s) => s.scan.scan_id).sort()

    afterEach(() => jsm.consumers.delete(SCAN_BATCH_STREAM, 'scans-relay').catch(() => false))

    it('puts every scan of every batch on scans.<code> as a message of its own, Nats-Msg-Id = scan_id, and acknowledges the batches', async () => {
      const publisher = createJetStreamScanPublisher(nc)
      for (const e of range(1, 1500)) publisher.publish(e)
      await publisher.flush()
      const relay = createScanRelay(nc)
      await relay.start()
      for (const e of range(1501, 2000)) publisher.publish(e)
      await publisher.flush()
      await waitUntil(async () => (await relayedCount()) === 2000, 10_000, 'every scan in SCANS')
      await relay.stop()
      const messages = await relayed()
      expect(messages.every((m) => m.subject === `scans.${m.scan.code}` && m.id === m.scan.scan_id)).toBe(true)
      expect(messages.find((m) => m.id === 'scan-7')!.scan).toEqual(event(7))
      expect(ids(messages)).toEqual(ids(range(1, 2000).map((scan) => ({ scan }))))
      const info = await jsm.consumers.info(SCAN_BATCH_STREAM, 'scans-relay')
      expect([info.num_pending, info.num_ack_pending]).toEqual([0, 0])
      publisher.close()
    })

    it('gives way while ingestion is behind, and relays at once when told it caught up', async () => {
      const relay = createScanRelay(nc, { giveWayMs: 5_000 })
      await relay.start()
      relay.giveWay(true)
      const publisher = createJetStreamScanPublisher(nc)
      for (const e of range(1, 100)) publisher.publish(e)
      await publisher.flush()
      await Bun.sleep(700)
      expect(await relayedCount()).toBe(0)
      const resumedAt = performance.now()
      relay.giveWay(false)
      await waitUntil(async () => (await relayedCount()) === 100, 4_000, 'every scan in SCANS')
      expect(performance.now() - resumedAt).toBeLessThan(4_000) // not the 5 s pause running out
      await relay.stop()
      publisher.close()
    })

    it('still relays, a round per giveWayMs, while ingestion stays behind', async () => {
      const relay = createScanRelay(nc, { giveWayMs: 300 })
      await relay.start()
      relay.giveWay(true)
      const publisher = createJetStreamScanPublisher(nc)
      for (const e of range(1, 100)) publisher.publish(e)
      await publisher.flush()
      await waitUntil(async () => (await relayedCount()) === 100, 5_000, 'every scan in SCANS though never resumed')
      const stopping = performance.now()
      await relay.stop() // a relay giving way stops without waiting its pause out
      expect(performance.now() - stopping).toBeLessThan(1_500)
      publisher.close()
    })

    it('stores a scan that comes in two batches (a batch relayed again after a crash) once', async () => {
      const js = nc.jetstream()
      await js.publish(SCAN_BATCH_SUBJECT, encode(range(1, 10)), { msgID: 'batch-a' })
      await js.publish(SCAN_BATCH_SUBJECT, encode(range(5, 15)), { msgID: 'batch-b' })
      const relay = createScanRelay(nc)
      await relay.start()
      // One snapshot of the consumer: two reads could see the batches pending in neither (the
      // first before the pull delivered them, the second after), as a CI run once did.
      await waitUntil(async () => (await jsm.consumers.info(SCAN_BATCH_STREAM, 'scans-relay')).ack_floor.stream_seq === 2, 10_000, 'both batches relayed and acknowledged')
      await relay.stop()
      expect(ids(await relayed())).toEqual(ids(range(1, 15).map((scan) => ({ scan }))))
    })

    it('makes SCANS again when it is lost and relays every batch, none lost', async () => {
      const relay = createScanRelay(nc, { timeoutMs: 500, retryMs: 100 })
      await relay.start()
      const publisher = createJetStreamScanPublisher(nc)
      for (const e of range(1, 5)) publisher.publish(e)
      await publisher.flush()
      await waitUntil(async () => (await relayedCount()) === 5, 10_000, 'the first five scans')
      await jsm.streams.delete(SCAN_STREAM)
      for (const e of range(6, 10)) publisher.publish(e)
      await publisher.flush()
      await waitUntil(async () => (await relayedCount().catch(() => 0)) === 5, 15_000, 'the five scans after the loss in a new SCANS')
      await relay.stop()
      expect(ids(await relayed())).toEqual(ids(range(6, 10).map((scan) => ({ scan }))))
      publisher.close()
    }, 20_000)

    it('relays a batch again while SCANS refuses some of its scans (an error PubAck), until every one is stored, and logs JetStream\'s reason', async () => {
      const { config } = await jsm.streams.info(SCAN_STREAM)
      await jsm.streams.update(SCAN_STREAM, { ...config, max_msgs: 2, discard: DiscardPolicy.New })
      const relay = createScanRelay(nc, { timeoutMs: 500, retryMs: 100 })
      const { lines, restore } = captureLog()
      await relay.start()
      const publisher = createJetStreamScanPublisher(nc)
      for (const e of range(1, 5)) publisher.publish(e)
      await publisher.flush()
      await waitUntil(async () => (await jsm.consumers.info(SCAN_BATCH_STREAM, 'scans-relay')).num_redelivered > 0, 10_000, 'the batch delivered again').finally(restore)
      expect(await relayedCount()).toBe(2)
      await jsm.streams.update(SCAN_STREAM, { ...config, max_msgs: -1, discard: DiscardPolicy.Old })
      await waitUntil(async () => (await relayedCount()) === 5, 10_000, 'all five once SCANS takes them')
      await relay.stop()
      expect(ids(await relayed())).toEqual(ids(range(1, 5).map((scan) => ({ scan }))))
      publisher.close()
      // The reason, as a full store would say `insufficient resources`: not a bare count of scans.
      expect(lines.find((l) => l.msg === 'scans not applied, redelivering')?.err.message).toBe('3 scans not stored in SCANS: maximum messages exceeded')
    }, 20_000)

    // A core subscriber of scans.> answering what it reads (msg.respond) answers on the relay's
    // reply subject too, often before JetStream does.
    const answering = (reply: string) => nc.subscribe('scans.>', { callback: (_error, msg) => void msg.respond(reply) })

    it('takes no answer but JetStream\'s as stored: with SCANS gone and a core subscriber answering {"status":"ok"}, the batch is not acknowledged, and its scans reach SCANS once it is made again', async () => {
      const relay = createScanRelay(nc, { timeoutMs: 300, retryMs: 100 })
      await relay.start()
      await jsm.streams.delete(SCAN_STREAM) // after the start, which made it: only the subscriber answers now
      const subscriber = answering('{"status":"ok"}')
      const publisher = createJetStreamScanPublisher(nc)
      try {
        for (const e of range(1, 5)) publisher.publish(e)
        await publisher.flush()
        // Before, the five answers were taken as PubAcks: the batch was acknowledged, SCANS never made again, the scans lost.
        await waitUntil(async () => (await relayedCount().catch(() => 0)) === 5, 10_000, 'the five scans in a SCANS made again')
        expect(ids(await relayed())).toEqual(ids(range(1, 5).map((scan) => ({ scan }))))
      } finally {
        subscriber.unsubscribe()
        await relay.stop()
        publisher.close()
      }
    }, 20_000)

    it('takes no other answer as a refusal either: with a core subscriber answering an error of its own, every batch is relayed at once, none delivered again', async () => {
      const subscriber = answering('{"error":"not mine"}')
      const relay = createScanRelay(nc, { timeoutMs: 2_000, retryMs: 100 })
      await relay.start()
      const publisher = createJetStreamScanPublisher(nc)
      try {
        for (const e of range(1, 500)) publisher.publish(e)
        await publisher.flush()
        await waitUntil(async () => (await relayedCount()) === 500, 10_000, 'every scan in SCANS')
        await waitUntil(async () => (await jsm.consumers.info(SCAN_BATCH_STREAM, 'scans-relay')).num_ack_pending === 0, 5_000, 'every batch acknowledged')
        const info = await jsm.consumers.info(SCAN_BATCH_STREAM, 'scans-relay')
        expect([info.num_pending, info.num_redelivered]).toEqual([0, 0])
      } finally {
        subscriber.unsubscribe()
        await relay.stop()
        publisher.close()
      }
    })

    it('acknowledges a malformed batch without relaying it, and goes on with the next', async () => {
      const js = nc.jetstream()
      await js.publish(SCAN_BATCH_SUBJECT, new TextEncoder().encode('{not json'))
      await js.publish(SCAN_BATCH_SUBJECT, encode([{ no: 'scan' }, event(1)]))
      const relay = createScanRelay(nc)
      await relay.start()
      await waitUntil(async () => (await relayedCount()) === 1, 10_000, 'the one good scan')
      await waitUntil(async () => (await jsm.consumers.info(SCAN_BATCH_STREAM, 'scans-relay')).num_ack_pending === 0, 5_000, 'both acknowledged')
      await relay.stop()
      expect(ids(await relayed())).toEqual(['scan-1'])
    })

    // Published, `scans.a b` closed the relay's connection (a protocol error), an id with a line
    // break threw, `scans.` no stream took: the batch came again after each failure, and SCANS
    // stopped for good. `scans.*` and `scans.a.b` were stored, on subjects no consumer expects.
    it('drops a scan that cannot be published as scans.<code> with its id (code no code, id no header value), and relays the rest', async () => {
      const js = nc.jetstream()
      const { lines, restore } = captureLog()
      const bad = ['a b', '', 'a.b', '*', 'Code\r\n0001'].map((code, n) => ({ ...event(100 + n), code }))
      await js.publish(SCAN_BATCH_SUBJECT, encode([event(1), ...bad, { ...event(2), scan_id: 'scan-2\r\nNats-Expected-Stream: X' }]))
      await js.publish(SCAN_BATCH_SUBJECT, encode([event(3)]))
      const relay = createScanRelay(nc, { timeoutMs: 500, retryMs: 100 })
      await relay.start()
      try {
        await waitUntil(async () => (await jsm.consumers.info(SCAN_BATCH_STREAM, 'scans-relay')).ack_floor.stream_seq === 2, 10_000, 'both batches relayed and acknowledged')
      } finally {
        await relay.stop()
        restore()
      }
      expect((await relayed()).map((m) => [m.subject, m.id])).toEqual([['scans.Code0001', 'scan-1'], ['scans.Code0000', 'scan-3']])
      expect(lines.filter((l) => l.msg === 'malformed scans in a batch: not relayed').map((l) => l.dropped)).toEqual([6])
    }, 20_000)

    it('after a stop, the next relay goes on with exactly the batches published meanwhile', async () => {
      const publisher = createJetStreamScanPublisher(nc)
      const first = createScanRelay(nc)
      await first.start()
      for (const e of range(1, 20)) publisher.publish(e)
      await publisher.flush()
      await waitUntil(async () => (await relayedCount()) === 20, 10_000, 'twenty scans')
      await first.stop()
      for (const e of range(21, 30)) publisher.publish(e)
      await publisher.flush()
      await Bun.sleep(300)
      expect(await relayedCount()).toBe(20)
      const second = createScanRelay(nc)
      await second.start()
      await waitUntil(async () => (await relayedCount()) === 30, 10_000, 'thirty scans')
      await second.stop()
      expect(ids(await relayed())).toEqual(ids(range(1, 30).map((scan) => ({ scan }))))
      publisher.close()
    })

    it('warns at start while the consumer analytics of SCANS, left from before SCAN_BATCHES, exists', async () => {
      const { lines, restore } = captureLog()
      try {
        const quiet = createScanRelay(nc)
        await quiet.start()
        await quiet.stop()
        expect(lines.filter((l) => l.msg.includes('left from a version before'))).toEqual([])
        await jsm.consumers.add(SCAN_STREAM, { durable_name: 'analytics', ack_policy: AckPolicy.Explicit })
        await nc.jetstream().publish('scans.Code0001', encode(event(1)))
        const relay = createScanRelay(nc)
        await relay.start()
        await relay.stop()
        const warned = lines.filter((l) => l.msg.includes('left from a version before'))
        expect(warned.map((l) => l.pending)).toEqual([1])
        expect(warned[0]!.msg).toContain('nats consumer rm SCANS analytics')
      } finally {
        restore()
        await jsm.consumers.delete(SCAN_STREAM, 'analytics').catch(() => false)
      }
    })
  })
