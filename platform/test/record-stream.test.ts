import { afterAll, beforeAll, describe, expect, it, setSystemTime } from 'bun:test'
import { AckPolicy, connect, DeliverPolicy, type JetStreamManager, type NatsConnection } from 'nats'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { createDurableConsumer, createJetStreamRecordEvents, ensureRecordEventStream, type HeldEvents, RECORD_EVENT_STREAM, recordEventsOf } from '@lr/platform/record-stream'
import { openJsonSpool } from '@lr/platform/scan-spool'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { RecordEvent } from '@lr/proto'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'
import { storedEventIds as eventIdsIn } from './record-event-stream.fixture'
import { captureLog } from './log-capture'
import { ensureScanBatchStream, SCAN_BATCH_STREAM, SCAN_BATCH_SUBJECT, SCAN_CODES_HEADER, SCAN_CODES_HEADER_MAX, scanCodesOf, scansOfBatch } from '@lr/platform/scan-stream-config'

const event = (n: number): RecordEvent => ({ id: `evt_${n}`, type: 'record.created', library: 'acct_1', timestamp: new Date(1_736_510_400_000 + n).toISOString(), data: { n } })
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => event(from + i))

const skip = skipReason('nats-server')
if (skip) describe.skip(`record events on JetStream (${skip})`, () => {})
else
  describe('record events on JetStream when the broker loses the stream or the consumer (restarted without its store, or deleted by hand)', () => {
    let server: NatsServer
    let nc: NatsConnection
    let jsm: JetStreamManager

    beforeAll(async () => {
      server = await startNats({ jetstream: true })
      nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 })
      jsm = await nc.jetstreamManager()
    })
    afterAll(async () => {
      await nc?.close()
      await server?.stop()
    })

    for (const lost of ['consumer', 'stream'] as const)
      it(`the sink and the durable consumer make the ${lost} again, and every event published after is handled`, async () => {
        await jsm.streams.delete(RECORD_EVENT_STREAM).catch(() => false)
        const sink = createJetStreamRecordEvents(nc)
        const seen = new Set<string>()
        const consumer = createDurableConsumer(nc, { stream: RECORD_EVENT_STREAM, durable: 'webhooks', ensureStream: ensureRecordEventStream, retryMs: 50 })
        await consumer.start(async (payloads) => void payloads.forEach((p) => seen.add((p as RecordEvent).id)))
        for (const e of range(1, 3)) await sink(e)
        await waitUntil(() => seen.size === 3, 5_000, 'the first three events')
        if (lost === 'consumer') await jsm.consumers.delete(RECORD_EVENT_STREAM, 'webhooks')
        else await jsm.streams.delete(RECORD_EVENT_STREAM)
        for (const e of range(4, 6)) await sink(e)
        await waitUntil(() => seen.size === 6, 10_000, 'the events published after the loss')
        await consumer.stop()
        expect([...seen].sort()).toEqual(range(1, 6).map((e) => e.id))
      }, 20_000)

    it('makes a lost consumer again from the stream\'s own time, where this process\'s clock runs a minute ahead of the server\'s', async () => {
      await jsm.streams.delete(RECORD_EVENT_STREAM).catch(() => false)
      const sink = createJetStreamRecordEvents(nc)
      await sink(event(1)) // before the start, within an ack wait of it: it comes again when the consumer is made again
      const seen = new Set<string>()
      const consumer = createDurableConsumer(nc, { stream: RECORD_EVENT_STREAM, durable: 'webhooks', ensureStream: ensureRecordEventStream, retryMs: 50 })
      setSystemTime(new Date(Date.now() + 60_000))
      try {
        await consumer.start(async (payloads) => void payloads.forEach((p) => seen.add((p as RecordEvent).id)))
      } finally {
        setSystemTime()
      }
      // Lost before it handled anything: made again from the start, by the server's clock.
      await jsm.consumers.delete(RECORD_EVENT_STREAM, 'webhooks')
      for (const e of range(2, 4)) await sink(e)
      await waitUntil(() => seen.size >= 4, 15_000, 'the events published after the loss')
      await consumer.stop()
      expect([...seen].sort()).toEqual(range(1, 4).map((e) => e.id))
    }, 20_000)

    it('publishes the events handed over in one burst as one message per type (an array), a lone event as itself, and the consumer applies each event once', async () => {
      await jsm.streams.delete(RECORD_EVENT_STREAM).catch(() => false)
      const sink = createJetStreamRecordEvents(nc)
      const updated = (n: number): RecordEvent => ({ ...event(n), type: 'record.updated' })
      await Promise.all([...range(1, 5), updated(6), updated(7)].map(sink))
      await sink(event(8))
      const stored = await Promise.all([1, 2, 3].map((seq) => jsm.streams.getMessage(RECORD_EVENT_STREAM, { seq })))
      expect((await jsm.streams.info(RECORD_EVENT_STREAM)).state.messages).toBe(3)
      expect(stored.map((m) => m.subject)).toEqual(['record-events.record.created', 'record-events.record.updated', 'record-events.record.created'])
      expect(stored[0]!.json()).toEqual(range(1, 5))
      expect(stored[1]!.json()).toEqual([updated(6), updated(7)])
      expect(stored[2]!.json()).toEqual(event(8))
      // The batch's Nats-Msg-Id is its first event's id: a batch published again is kept once.
      expect(stored.map((m) => m.header.get('Nats-Msg-Id'))).toEqual(['evt_1', 'evt_6', 'evt_8'])
      const seen: string[] = []
      const consumer = createDurableConsumer(nc, { stream: RECORD_EVENT_STREAM, durable: 'webhooks', ensureStream: ensureRecordEventStream })
      await jsm.consumers.delete(RECORD_EVENT_STREAM, 'webhooks').catch(() => false)
      await jsm.consumers.add(RECORD_EVENT_STREAM, { durable_name: 'webhooks', ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All })
      await consumer.start(async (payloads) => void seen.push(...payloads.map((p) => (p as RecordEvent).id)))
      await waitUntil(() => seen.length >= 8, 5_000, 'the eight events')
      await consumer.stop()
      expect(seen).toEqual(['evt_1', 'evt_2', 'evt_3', 'evt_4', 'evt_5', 'evt_6', 'evt_7', 'evt_8'])
    })

    const storedEventIds = () => eventIdsIn(jsm)

    it('holds the events of a failed publish in its spool and publishes them once JetStream answers again; a sink started later sends what an earlier one left', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'lr-event-spool-'))
      const spool = () => openJsonSpool<HeldEvents>(dir, { maxBytes: 1 << 24 })
      /** Held events on disk, one batch a line: what a process killed now would leave. */
      const linesOnDisk = () => readdirSync(dir).flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n').filter((line) => line !== ''))
      try {
        await jsm.streams.delete(RECORD_EVENT_STREAM).catch(() => false)
        const first = createJetStreamRecordEvents(nc, { timeoutMs: 300, retryMs: 50, spool: spool() })
        await first(event(1))
        await server.down()
        try {
          for (const e of range(2, 4)) await first(e) // answered: the write they follow is stored
          await Bun.sleep(200) // retries fail meanwhile; the events stay on disk through them
          expect(linesOnDisk()).toHaveLength(3)
        } finally {
          await server.up()
        }
        await waitUntil(async () => (await storedEventIds().catch(() => [])).length === 4, 15_000, 'the held events in the stream')
        expect(await storedEventIds()).toEqual(range(1, 4).map((e) => e.id))
        await waitUntil(() => linesOnDisk().length === 0, 5_000, 'the spool emptied')

        // A process stopped during an outage: what it held waits in the spool for the next.
        const stopped = createJetStreamRecordEvents(nc, { timeoutMs: 300, retryMs: 600_000, spool: spool() })
        await server.down()
        try {
          for (const e of range(5, 6)) await stopped(e)
        } finally {
          await server.up()
        }
        await waitUntil(() => nc.flush().then(() => true, () => false), 10_000, 'the client to reconnect')
        createJetStreamRecordEvents(nc, { retryMs: 50, spool: spool() })
        await waitUntil(async () => (await storedEventIds().catch(() => [])).length === 6, 15_000, 'the events the stopped sink held')
        expect(await storedEventIds()).toEqual(range(1, 6).map((e) => e.id))
      } finally {
        await Bun.sleep(100)
        rmSync(dir, { recursive: true, force: true })
      }
    }, 60_000)

    it('holds the events of a failed publish in memory without a spool, and publishes them once JetStream answers again', async () => {
      await jsm.streams.delete(RECORD_EVENT_STREAM).catch(() => false)
      const sink = createJetStreamRecordEvents(nc, { timeoutMs: 300, retryMs: 50 })
      await sink(event(1))
      await server.down()
      try {
        for (const e of range(2, 3)) await sink(e)
      } finally {
        await server.up()
      }
      await waitUntil(async () => (await storedEventIds().catch(() => [])).length === 3, 15_000, 'the held events in the stream')
      expect(await storedEventIds()).toEqual(range(1, 3).map((e) => e.id))
    }, 30_000)

    it('keeps each message within maxBatchBytes: a burst larger than that goes as several messages, every event once', async () => {
      await jsm.streams.delete(RECORD_EVENT_STREAM).catch(() => false)
      const maxBatchBytes = 1000
      const sink = createJetStreamRecordEvents(nc, { maxBatchBytes })
      const big = (n: number): RecordEvent => ({ ...event(n), data: { n, name: 'x'.repeat(200) } })
      await Promise.all(Array.from({ length: 20 }, (_, i) => sink(big(i + 1))))
      const { messages } = (await jsm.streams.info(RECORD_EVENT_STREAM)).state
      const stored = await Promise.all(Array.from({ length: messages }, (_, i) => jsm.streams.getMessage(RECORD_EVENT_STREAM, { seq: i + 1 })))
      expect(messages).toBeGreaterThan(4)
      for (const m of stored) expect(m.data.length).toBeLessThanOrEqual(maxBatchBytes)
      expect(stored.flatMap((m) => recordEventsOf(m)).map((e) => (e as RecordEvent).id)).toEqual(Array.from({ length: 20 }, (_, i) => `evt_${i + 1}`))
    })

    it('hands every scan of a SCAN_BATCHES message to apply in one call (the webhooks worker\'s scan intake)', async () => {
      await jsm.streams.delete(SCAN_BATCH_STREAM).catch(() => false)
      const consumer = createDurableConsumer(nc, { stream: SCAN_BATCH_STREAM, durable: 'webhooks', ensureStream: ensureScanBatchStream, eventsOf: scansOfBatch })
      const calls: string[][] = []
      await consumer.start(async (payloads) => void calls.push(payloads.map((p) => (p as { scan_id: string }).scan_id)))
      const publisher = createJetStreamScanPublisher(nc)
      const scan = (n: number) => ({ scan_id: `scan-${n}`, code: 'Code0001', scanned_at: 1_736_510_400_000, user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE' })
      for (let n = 1; n <= 50; n++) publisher.publish(scan(n))
      await publisher.flush()
      await waitUntil(() => calls.flat().length === 50, 5_000, 'the fifty scans')
      await consumer.stop()
      publisher.close()
      expect(calls).toEqual([Array.from({ length: 50 }, (_, i) => `scan-${i + 1}`)])
    })

    const scanOf = (n: number, code: string) => ({ scan_id: `scan-${n}`, code, scanned_at: 1_736_510_400_000 + n, user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE' })

    it('names a batch\'s distinct codes in a header, and none beyond SCAN_CODES_HEADER_MAX codes', async () => {
      await jsm.streams.delete(SCAN_BATCH_STREAM).catch(() => false)
      await ensureScanBatchStream(jsm)
      const publisher = createJetStreamScanPublisher(nc)
      for (let n = 1; n <= 6; n++) publisher.publish(scanOf(n, n % 2 ? 'CodeOdd1' : 'CodeEven1'))
      await publisher.flush()
      for (let n = 1; n <= SCAN_CODES_HEADER_MAX + 1; n++) publisher.publish(scanOf(100 + n, `Many${n}`))
      await publisher.flush()
      publisher.close()
      const [few, many] = [await jsm.streams.getMessage(SCAN_BATCH_STREAM, { seq: 1 }), await jsm.streams.getMessage(SCAN_BATCH_STREAM, { seq: 2 })]
      expect(few.subject).toBe(SCAN_BATCH_SUBJECT)
      expect(few.header.get(SCAN_CODES_HEADER)).toBe('CodeOdd1 CodeEven1')
      expect(scanCodesOf({ headers: few.header })).toEqual(['CodeOdd1', 'CodeEven1'])
      expect(few.json<unknown[]>()).toHaveLength(6)
      expect(many.json<unknown[]>()).toHaveLength(SCAN_CODES_HEADER_MAX + 1)
      expect(many.header.get(SCAN_CODES_HEADER)).toBe('')
      expect(scanCodesOf({ headers: many.header })).toBeUndefined()
    })

    it('acknowledges a batch whose codes are not wanted without applying it, and applies the rest; a rejected question or a batch without the header is applied', async () => {
      await jsm.streams.delete(SCAN_BATCH_STREAM).catch(() => false)
      const consumer = createDurableConsumer(nc, { stream: SCAN_BATCH_STREAM, durable: 'webhooks', ensureStream: ensureScanBatchStream, eventsOf: scansOfBatch, codesOf: scanCodesOf, retryMs: 50 })
      const applied: string[][] = []
      const asked: string[][] = []
      await consumer.start(
        async (payloads) => void applied.push(payloads.map((p) => (p as { code: string }).code)),
        async (codes) => {
          asked.push([...codes])
          if (codes.includes('Broken1')) throw new Error('dynamic did not answer')
          return codes.includes('Wanted1')
        },
      )
      const publisher = createJetStreamScanPublisher(nc)
      const batch = async (...codes: string[]) => {
        codes.forEach((code, i) => publisher.publish(scanOf(i, code)))
        await publisher.flush()
      }
      await batch('Other1', 'Other2')
      await batch('Other1', 'Wanted1')
      await batch('Broken1')
      await batch('Other3')
      publisher.close()
      // An older publisher's batch: no header, so it is read.
      await nc.jetstream().publish(SCAN_BATCH_SUBJECT, JSON.stringify([scanOf(9, 'Other4')]))
      await waitUntil(async () => (await jsm.consumers.info(SCAN_BATCH_STREAM, 'webhooks')).num_pending === 0 && applied.length === 3, 5_000, 'every batch handled')
      await Bun.sleep(200)
      const info = await jsm.consumers.info(SCAN_BATCH_STREAM, 'webhooks')
      await consumer.stop()
      expect(asked).toEqual([['Other1', 'Other2'], ['Other1', 'Wanted1'], ['Broken1'], ['Other3']])
      expect(applied).toEqual([['Other1', 'Wanted1'], ['Broken1'], ['Other4']])
      // Every batch acknowledged, the unread ones too: nothing waits for redelivery.
      expect(info.num_ack_pending).toBe(0)
      expect(info.num_redelivered).toBe(0)
      expect(info.ack_floor.stream_seq).toBe(5)
    })

    it('logs a store refusing every event once per 10 s, not once per message and retry, and one line when events apply again', async () => {
      await jsm.streams.delete(RECORD_EVENT_STREAM).catch(() => false)
      const sink = createJetStreamRecordEvents(nc)
      const consumer = createDurableConsumer(nc, { stream: RECORD_EVENT_STREAM, durable: 'webhooks', ensureStream: ensureRecordEventStream, retryMs: 50 })
      let storeAway = true
      const seen = new Set<string>()
      const log = captureLog()
      try {
        await consumer.start(async (payloads) => {
          if (storeAway) throw new Error('store away')
          payloads.forEach((p) => seen.add((p as RecordEvent).id))
        })
        for (const e of range(1, 3)) await sink(e)
        await Bun.sleep(1_000) // about 20 refusals of each of the three messages at 50 ms
        storeAway = false
        await waitUntil(() => seen.size === 3, 5_000, 'the events applied once the store is back')
      } finally {
        await consumer.stop()
        log.restore()
      }
      const refused = log.lines.filter((line) => line.msg === 'event not applied, redelivering')
      expect(refused).toHaveLength(1)
      expect(refused[0]).toMatchObject({ stream: RECORD_EVENT_STREAM, consumer: 'webhooks', err: { message: 'store away' } })
      const again = log.lines.filter((line) => line.msg === 'events applied again')
      expect(again).toHaveLength(1)
      expect(again[0]!.refused).toBeGreaterThan(3)
    }, 15_000)
  })
