import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { type JetStreamManager, type NatsConnection, StorageType } from 'nats'
import type { NatsServer } from '../../test/harness/nats'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'
import { createJetStreamScanSource } from '@lr/platform/scan-stream-source'
import { ensureScanBatchStream, SCAN_BATCH_STREAM, SCAN_BATCH_SUBJECT, SCAN_STREAM } from '@lr/platform/scan-stream-config'
import type { ScanEvent } from '@lr/proto'
import { openScanSpool } from '@lr/platform/scan-spool'
import { captureLog } from './log-capture'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { event, ids, range, useScanStreams } from './scan-streams.fixture'

// The streams and the resolver's publisher; the analytics side is scan-stream-source.test.ts.
const skip = skipReason('nats-server')
if (skip) describe.skip(`scan stream on JetStream (${skip})`, () => {})
else
  describe('scan stream on JetStream (real nats-server -js)', () => {
    const streams = useScanStreams()
    let server: NatsServer
    let nc: NatsConnection
    let jsm: JetStreamManager
    beforeAll(() => void ({ server, nc, jsm } = streams))
    const storedScans = () => streams.storedScans()
    const stored = async () => (await storedScans()).length
    const batches = async () => (await jsm.streams.info(SCAN_BATCH_STREAM)).state.messages

    describe('ensureScanStream, ensureScanBatchStream', () => {
      it('creates SCANS on scans.> and SCAN_BATCHES on scan-batches, with file storage and a two-minute duplicate window', async () => {
        const [scans, batches] = await Promise.all([SCAN_STREAM, SCAN_BATCH_STREAM].map((name) => jsm.streams.info(name)))
        const settings = (info: typeof scans) => [info!.config.subjects, info!.config.storage, info!.config.duplicate_window]
        expect([settings(scans!), settings(batches!)]).toEqual([[['scans.>'], StorageType.File, 120_000_000_000], [['scan-batches'], StorageType.File, 120_000_000_000]])
      })

      it('leaves an existing stream and its scans as they are', async () => {
        const publisher = createJetStreamScanPublisher(nc)
        publisher.publish(event(1))
        await publisher.flush()
        await ensureScanBatchStream(jsm)
        expect(await stored()).toBe(1)
      })
    })

    describe('createJetStreamScanPublisher', () => {
      it('publishes the scans of one event-loop turn as one message: a JSON array, in order', async () => {
        const publisher = createJetStreamScanPublisher(nc)
        for (const e of range(1, 300)) publisher.publish(e)
        await publisher.flush()
        const msg = await jsm.streams.getMessage(SCAN_BATCH_STREAM, { seq: 1 })
        expect([await batches(), msg.subject, msg.json()]).toEqual([1, SCAN_BATCH_SUBJECT, range(1, 300)])
        expect(msg.header.get('Nats-Msg-Id')).toMatch(/^\d+-[0-9a-f]{8}-1$/)
      })

      it('takes a resolver thread\'s hand-over (publishBatch) scan by scan, with the scans published beside it; a text that is no JSON is logged, never thrown', async () => {
        const publisher = createJetStreamScanPublisher(nc)
        const log = captureLog()
        try {
          publisher.publish(event(1))
          publisher.publishBatch({ events: JSON.stringify(range(2, 4)), codes: 'Code0001', count: 3 })
          expect(() => publisher.publishBatch({ events: 'not json', codes: 'Code0001', count: 2 })).not.toThrow()
          await publisher.flush()
          expect((await jsm.streams.getMessage(SCAN_BATCH_STREAM, { seq: 1 })).json()).toEqual(range(1, 4))
          expect(log.lines.map((line) => [line.msg, line.scans])).toEqual([['scans not published', 2]])
        } finally {
          log.restore()
        }
      })

      it('cuts batches at maxBatch scans and at maxBatchBytes, keeping every scan in order', async () => {
        const byCount = createJetStreamScanPublisher(nc, { maxBatch: 100 })
        for (const e of range(1, 1000)) byCount.publish(e)
        await byCount.flush()
        expect([await batches() >= 10, ids(await storedScans())]).toEqual([true, ids(range(1, 1000))])
        const size = JSON.stringify(event(1001)).length + 1
        const bySize = createJetStreamScanPublisher(nc, { maxBatchBytes: 10 * size + 2 })
        for (const e of range(1001, 1100)) bySize.publish(e)
        await bySize.flush()
        const sizes: number[] = []
        const { last_seq } = (await jsm.streams.info(SCAN_BATCH_STREAM)).state
        for (let seq = 1; seq <= last_seq; seq++) sizes.push((await jsm.streams.getMessage(SCAN_BATCH_STREAM, { seq })).data.length)
        expect(Math.max(...sizes.slice(-10))).toBeLessThanOrEqual(10 * size + 2)
        expect(ids(await storedScans())).toEqual(ids(range(1, 1100)))
      })

      it('sends a batch whose publish failed again whole, with the same Nats-Msg-Id, so it is stored once', async () => {
        const sent: { id: string; scans: string[] }[] = []
        const watch = nc.subscribe(SCAN_BATCH_SUBJECT, { callback: (_, m) => void sent.push({ id: m.headers!.get('Nats-Msg-Id'), scans: ids(m.json()) }) })
        const publisher = createJetStreamScanPublisher(nc, { timeoutMs: 500, retryMs: 50 })
        await jsm.streams.delete(SCAN_BATCH_STREAM) // the first publish gets "no responders"; the stream is made again
        for (const e of range(1, 3)) publisher.publish(e)
        await waitUntil(() => publisher.pending() === 0, 10_000, 'the batch to be stored')
        for (const e of range(4, 5)) publisher.publish(e)
        await publisher.flush()
        watch.unsubscribe()
        expect(sent.length).toBeGreaterThanOrEqual(3)
        expect(sent.slice(0, -1).every((s) => s.id === sent[0]!.id && s.scans.join() === 'scan-1,scan-2,scan-3')).toBe(true)
        expect(sent.at(-1)!.id).not.toBe(sent[0]!.id)
        expect(ids(await storedScans())).toEqual(ids(range(1, 5)))
        publisher.close()
      }, 20_000)

      it('holds scans while NATS is down and delivers every one once it is back', async () => {
        const publisher = createJetStreamScanPublisher(nc, { timeoutMs: 500, retryMs: 50 })
        await server.down()
        const started = performance.now()
        for (const e of range(1, 50)) publisher.publish(e)
        expect(performance.now() - started).toBeLessThan(50)
        expect(publisher.pending()).toBe(50)
        await Bun.sleep(700)
        await server.up()
        await waitUntil(() => publisher.pending() === 0, 10_000, 'the held scans to be published')
        expect([await stored(), publisher.dropped()]).toEqual([50, 0])
      }, 20_000)

      it('drops the oldest scans beyond its buffer and counts them', async () => {
        const publisher = createJetStreamScanPublisher(nc, { maxBuffer: 10, timeoutMs: 500, retryMs: 50 })
        await server.down()
        await Bun.sleep(100) // the client notices the closed socket
        for (const e of range(1, 15)) publisher.publish(e)
        expect([publisher.pending(), publisher.dropped()]).toEqual([10, 5])
        await server.up()
        await waitUntil(() => publisher.pending() === 0, 10_000, 'the held scans to be published')
        expect(ids(await storedScans())).toEqual(ids(range(6, 15)))
        // Closed, so its drops are logged now: its 5 s report came into a later test's captured log.
        publisher.close()
      }, 20_000)
    })

    describe('when the broker loses the stream or the consumer (restarted without its store, or deleted by hand)', () => {
      it('the publisher makes the stream again and publishes every scan it held meanwhile', async () => {
        const publisher = createJetStreamScanPublisher(nc, { timeoutMs: 500, retryMs: 50 })
        for (const e of range(1, 5)) publisher.publish(e)
        await publisher.flush()
        await jsm.streams.delete(SCAN_BATCH_STREAM)
        for (const e of range(6, 10)) publisher.publish(e)
        await waitUntil(() => publisher.pending() === 0, 10_000, 'the held scans to be published')
        expect([await stored(), publisher.dropped()]).toEqual([5, 0])
        publisher.close()
      }, 20_000)

      for (const lost of ['consumer', 'stream'] as const)
        it(`the source makes its ${lost} again and applies every scan published after`, async () => {
          const seen = new Set<string>()
          const source = createJetStreamScanSource(nc, { retryMs: 50 })
          await source.start(async (events) => void ids(events).forEach((id) => seen.add(id)))
          const publisher = createJetStreamScanPublisher(nc, { timeoutMs: 500, retryMs: 50 })
          try {
            for (const e of range(1, 5)) publisher.publish(e)
            await waitUntil(() => seen.size === 5, 5_000, 'the first five scans')
            if (lost === 'consumer') await jsm.consumers.delete(SCAN_BATCH_STREAM, 'analytics')
            else await jsm.streams.delete(SCAN_BATCH_STREAM)
            for (const e of range(6, 10)) publisher.publish(e)
            await waitUntil(() => seen.size === 10, 10_000, 'the scans published after the loss')
          } finally {
            // Stopped whatever happened: a source left running keeps the ingest lease from the next test's.
            await source.stop()
            publisher.close()
          }
          expect([...seen].sort()).toEqual(ids(range(1, 10)).sort())
          await jsm.consumers.delete(SCAN_BATCH_STREAM, 'analytics').catch(() => false)
        }, 20_000)
    })

    describe('createJetStreamScanPublisher with a spool on disk', () => {
      let dir: string
      beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), 'lr-spool-'))
      })
      afterEach(() => rmSync(dir, { recursive: true, force: true }))

      it('loses no scan through a broker outage, holding none in memory while it is away', async () => {
        const spool = openScanSpool(dir, { maxBytes: 256 * 1024 * 1024, segmentBytes: 256 * 1024 })
        const publisher = createJetStreamScanPublisher(nc, { maxBuffer: 1000, timeoutMs: 500, retryMs: 50, spool })
        await server.down()
        await Bun.sleep(100) // the client notices the closed socket
        const N = 50_000
        let heapPeak = 0
        for (let n = 1; n <= N; n++) {
          publisher.publish(event(n))
          if (n % 5000 === 0) heapPeak = Math.max(heapPeak, publisher.pending() - spool.size())
        }
        expect([publisher.pending(), publisher.dropped()]).toEqual([N, 0])
        expect(heapPeak).toBe(0)
        expect(spool.size()).toBe(N)
        expect(spool.bytes()).toBeGreaterThan(0)
        await server.up()
        await waitUntil(() => publisher.pending() === 0, 60_000, 'every held scan to be published')
        expect(await stored()).toBe(N)
        expect(spool.bytes()).toBe(0)
        expect(ids(await storedScans())).toEqual(ids(range(1, N)))
        publisher.close()
      }, 90_000)

      /** The scan lines in the spool's files: what a process killed now would leave for the next. */
      const linesOnDisk = () => readdirSync(dir).flatMap((name) => readFileSync(join(dir, name), 'utf8').split('\n').filter((line) => line !== ''))

      it('writes an outage\'s scans to the spool\'s files by the end of each turn, long before maxBuffer: a process killed then loses none of them', async () => {
        const spool = openScanSpool(dir, { maxBytes: 1 << 26 })
        const publisher = createJetStreamScanPublisher(nc, { maxBuffer: 10_000, timeoutMs: 500, retryMs: 50, spool })
        await server.down()
        await Bun.sleep(100) // the client notices the closed socket
        for (const e of range(1, 3000)) publisher.publish(e)
        await Bun.sleep(20) // the end of the turn
        expect(linesOnDisk()).toHaveLength(3000)
        await server.up()
        await waitUntil(() => publisher.pending() === 0, 30_000, 'the held scans to be published')
        expect(ids(await storedScans())).toEqual(ids(range(1, 3000)))
        publisher.close()
      }, 60_000)

      it('moves the scans queued behind the batches in flight to the spool\'s files when a hung broker fails them, and sends all in order after', async () => {
        const spool = openScanSpool(dir, { maxBytes: 1 << 26 })
        const publisher = createJetStreamScanPublisher(nc, { maxBuffer: 10_000, maxInFlight: 2, maxBatch: 100, timeoutMs: 500, retryMs: 50, spool })
        await nc.flush() // connected again after the last test's outage
        await server.freeze() // connected, answering nothing: the batches sent time out
        try {
          for (const e of range(1, 1000)) publisher.publish(e)
          await Bun.sleep(20)
          expect(linesOnDisk()).toHaveLength(0) // two batches in flight, the rest queued: no failure yet
          await waitUntil(() => linesOnDisk().length >= 800, 5_000, 'the queue to reach the spool once a publish failed')
        } finally {
          server.thaw()
        }
        await waitUntil(() => publisher.pending() === 0, 30_000, 'the held scans to be published')
        expect(ids(await storedScans())).toEqual(ids(range(1, 1000)))
        publisher.close()
      }, 60_000)

      it('drops and counts only beyond the spool\'s bound, and logs every drop in a count', async () => {
        const { lines, restore } = captureLog()
        const spool = openScanSpool(dir, { maxBytes: 20 * 1024, segmentBytes: 4 * 1024 })
        const publisher = createJetStreamScanPublisher(nc, { maxBuffer: 10, timeoutMs: 500, retryMs: 50, spool })
        await server.down()
        await Bun.sleep(100)
        for (const e of range(1, 500)) publisher.publish(e)
        const kept = publisher.pending()
        expect(publisher.dropped()).toBe(500 - kept)
        expect(publisher.dropped()).toBeGreaterThan(0)
        expect(spool.bytes()).toBeLessThanOrEqual(20 * 1024)
        await server.up()
        await waitUntil(() => publisher.pending() === 0, 20_000, 'the held scans to be published')
        expect(await stored()).toBe(kept)
        publisher.close()
        restore()
        const reported = lines.filter((l) => l.msg.startsWith('scans dropped')).reduce((sum, l) => sum + l.dropped, 0)
        expect(reported).toBe(publisher.dropped())
      }, 30_000)

      it('keeps what it still holds at close on disk, for the next publisher to send', async () => {
        const first = createJetStreamScanPublisher(nc, { maxBuffer: 100, timeoutMs: 500, retryMs: 50, spool: openScanSpool(dir, { maxBytes: 1 << 24 }) })
        await server.down()
        await Bun.sleep(100)
        for (const e of range(1, 700)) first.publish(e)
        first.close()
        await server.up()
        // A restarted resolver: same pid here, so it adopts the files as a new process would.
        const second = createJetStreamScanPublisher(nc, { spool: openScanSpool(dir, { maxBytes: 1 << 24 }) })
        second.publish(event(701))
        await waitUntil(async () => (await stored()) === 701, 20_000, 'all 701 scans in the stream')
        second.close()
      }, 30_000)

      it('sends what an earlier publisher left on disk at once, without waiting for a new scan', async () => {
        const first = createJetStreamScanPublisher(nc, { maxBuffer: 100, timeoutMs: 500, retryMs: 50, spool: openScanSpool(dir, { maxBytes: 1 << 24 }) })
        await server.down()
        await Bun.sleep(100)
        for (const e of range(1, 300)) first.publish(e)
        first.close()
        await server.up()
        const second = createJetStreamScanPublisher(nc, { spool: openScanSpool(dir, { maxBytes: 1 << 24 }) })
        await waitUntil(async () => (await stored()) === 300, 20_000, 'the 300 spooled scans in the stream, no new scan published')
        expect(ids(await storedScans())).toEqual(ids(range(1, 300)))
        second.close()
      }, 30_000)
    })

  })
