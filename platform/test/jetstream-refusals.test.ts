import { describe, expect, it } from 'bun:test'
import { DiscardPolicy } from 'nats'
import { acquireIngestLease, LEASE_BUCKET } from '@lr/platform/ingest-lease'
import { durableStream } from '@lr/platform/jetstream-streams'
import { jetstreamTakesWrites, streamsRefusing } from '@lr/platform/jetstream-refusals'
import { metricsText } from '@lr/platform/metrics'
import { createJetStreamRecordEvents, RECORD_EVENT_STREAM } from '@lr/platform/record-stream'
import { SCAN_BATCH_STREAM, scanBatchStreamConfig } from '@lr/platform/scan-stream-config'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'
import { useNats } from '../../test/harness/use-nats'
import { sample } from '../../test/harness/metrics'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { captureLog } from './log-capture'
import { event } from './scan-streams.fixture'
import { paddedEvent, refuseRecordEvents, takeRecordEvents } from './record-event-stream.fixture'

const series = async (name: string) => sample(await metricsText(), name) ?? 0
const refused = (stream: string, reason: string) => series(`lr_jetstream_refusals_total{stream="${stream}",reason="${reason}"}`)
const full = (stream: string) => series(`lr_jetstream_store_full{stream="${stream}"}`)

/**
 * A JetStream store that is full refuses every write (README "Retention and the broker's disk"):
 * the processes go on serving, and before this nothing but a warning said so (`/readyz` 200, no
 * metric). Each writer now counts the refusals by reason, sets lr_jetstream_store_full, writes a
 * throttled `error` line, and its process's /readyz lists `jetstream` under `degraded`.
 */
describe.skipIf(Boolean(skipReason('nats-server')))('JetStream refusing writes for want of room (real nats-server -js)', () => {
  describe('a stream bound with discard=new', () => {
    const nats = useNats({ jetstream: true })

    it('the resolver\'s scan publisher: counted by reason, flagged, logged once per spell, cleared when the stream takes scans again', async () => {
      const jsm = await nats.nc.jetstreamManager()
      await jsm.streams.add({ ...scanBatchStreamConfig(), max_bytes: 1, discard: DiscardPolicy.New })
      const log = captureLog()
      const publisher = createJetStreamScanPublisher(nats.nc, { timeoutMs: 500, retryMs: 20 })
      try {
        const before = await refused(SCAN_BATCH_STREAM, 'max_bytes')
        for (let n = 1; n <= 10; n++) publisher.publish(event(n))
        await waitUntil(async () => (await refused(SCAN_BATCH_STREAM, 'max_bytes')) >= before + 3, 5000, 'refusals counted')
        expect([await jetstreamTakesWrites(), streamsRefusing() > 0, await full(SCAN_BATCH_STREAM)]).toEqual([false, true, 1])
        const lines = log.lines.filter((line) => line.msg.startsWith(`JetStream refuses writes to ${SCAN_BATCH_STREAM}`))
        expect(lines.map(({ stream, reason, refused }) => ({ stream, reason, refused }))).toEqual([{ stream: SCAN_BATCH_STREAM, reason: 'max_bytes', refused: 1 }])
        const { config } = await jsm.streams.info(SCAN_BATCH_STREAM)
        await jsm.streams.update(SCAN_BATCH_STREAM, { ...config, max_bytes: -1 })
        await waitUntil(() => publisher.pending() === 0, 5000, 'the held scans to be taken')
        expect([await jetstreamTakesWrites(), streamsRefusing(), await full(SCAN_BATCH_STREAM)]).toEqual([true, 0, 0])
        expect(log.lines.map((line) => line.msg)).toContain(`JetStream takes writes to ${SCAN_BATCH_STREAM} again`)
      } finally {
        publisher.close()
        log.restore()
      }
    })

    it('records\' and dynamic\'s record events: counted and flagged while held, cleared once they are taken', async () => {
      const jsm = await nats.nc.jetstreamManager()
      await refuseRecordEvents(jsm)
      const sink = createJetStreamRecordEvents(nats.nc, { retryMs: 50 })
      const before = await refused(RECORD_EVENT_STREAM, 'max_bytes')
      await sink(paddedEvent(1))
      await waitUntil(async () => (await refused(RECORD_EVENT_STREAM, 'max_bytes')) > before, 5000, 'the refusal counted')
      expect([streamsRefusing(), await full(RECORD_EVENT_STREAM)]).toEqual([1, 1])
      await takeRecordEvents(jsm)
      await waitUntil(async () => (await full(RECORD_EVENT_STREAM)) === 0, 5000, 'the held events to be taken')
      expect(streamsRefusing()).toBe(0)
    })
  })

  describe('a server whose JetStream store is full (max_file_store)', () => {
    const nats = useNats({ jetstream: true, maxFileStore: '1MB' })

    it('the analytics ingest lease: lost and flagged (insufficient_resources), its bucket not "made again" as if missing', async () => {
      const lease = await acquireIngestLease(nats.nc, { ttlMs: 400, holder: 'holder' })
      const log = captureLog()
      const jsm = await nats.nc.jetstreamManager()
      try {
        expect(lease.held()).toBe(true)
        // Another stream takes the rest of the server's store.
        await jsm.streams.add({ ...durableStream('FILLER', ['filler.>']) })
        const js = nats.nc.jetstream()
        for (let i = 0; i < 40; i++) if (await js.publish('filler.x', new Uint8Array(64 * 1024)).then(() => false, () => true)) break
        await waitUntil(() => !lease.held(), 3000, 'the lease lost to a full store')
        await waitUntil(async () => (await refused(`KV_${LEASE_BUCKET}`, 'insufficient_resources')) > 0, 3000, 'the refusal counted')
        expect([streamsRefusing(), await full(`KV_${LEASE_BUCKET}`)]).toEqual([1, 1])
        await Bun.sleep(1500) // a few renewals, each refused
        expect(log.lines.map((line) => line.msg)).not.toContain('the ingest lease bucket was missing: made it again')
        expect(log.lines.filter((line) => line.msg.startsWith(`JetStream refuses writes to KV_${LEASE_BUCKET}`))).toHaveLength(1)
        await jsm.streams.delete('FILLER')
        await waitUntil(() => lease.held(), 5000, 'the lease taken again once the store has room')
        expect([streamsRefusing(), await full(`KV_${LEASE_BUCKET}`)]).toEqual([0, 0])
      } finally {
        log.restore()
        await lease.release()
      }
    })
  })
})
