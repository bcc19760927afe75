import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Bus, loadConfig } from '@lr/proto'
import { type RunningService } from '@lr/platform/lifecycle'
import { ANALYTICS_SUBJECTS, type AnalyticsSummary } from '@lr/proto'
import { createNatsBus } from '@lr/platform/bus-nats'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'
import { createJetStreamScanSource, SCAN_BATCH_STREAM, SCAN_BATCH_SUBJECT } from '@lr/platform/scan-stream'
import type { ScanEvent } from '@lr/proto'
import { startNats, type NatsServer } from '../../../test/harness/nats'
import { waitUntil } from '../../../test/harness/ports'
import { skipReason } from '../../../test/harness/servers'
import { startAnalytics } from '../src/start'
import { alice, event, fakeDirectory, T0, UA, visitor } from './fixtures'

const CLIENTS = [UA.iphone, UA.ipad, UA.android, UA.windows]
/** Scan n of Code0001: one of four real clients, one of 50 visitors, over three days. */
const nth = (n: number, prefix = 'p'): ScanEvent =>
  event(n, { scan_id: `${prefix}-${n}`, user_agent: CLIENTS[n % 4]!, visitor_id: visitor(n % 50), scanned_at: T0 + (n % 3) * 86_400_000 })

const skip = skipReason('nats-server')
if (skip) describe.skip(`analytics over JetStream (${skip})`, () => {})
else
  describe('analytics over JetStream (real nats-server -js)', () => {
    let server: NatsServer
    let bus: Bus & { connection: import('nats').NatsConnection }
    let dataDir: string
    let analytics: RunningService | undefined
    const directory = fakeDirectory({ acct_a: [{ code: 'Code0001' }] })

    const start = async () => {
      const config = loadConfig({ TRANSPORT: 'nats', NATS_URL: server.url, DATA_DIR: dataDir })
      analytics = await startAnalytics({ bus, config }, { directory, source: createJetStreamScanSource(bus.connection) })
    }
    const total = async () => (await bus.request<AnalyticsSummary>(ANALYTICS_SUBJECTS.summary, { principal: alice, query: {} })).analytics[0]!
    const publishAll = async (events: ScanEvent[]) => {
      const publisher = createJetStreamScanPublisher(bus.connection, { maxBuffer: 50_000 })
      for (const e of events) publisher.publish(e)
      await publisher.flush()
    }

    beforeAll(async () => {
      server = await startNats({ jetstream: true })
      bus = await createNatsBus(server.url, 'analytics-test')
      dataDir = mkdtempSync(join(tmpdir(), 'lr-analytics-'))
      await start()
    })
    afterAll(async () => {
      await analytics?.stop()
      await bus?.close()
      await server?.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    it('shows a scan in the summary within 2 seconds', async () => {
      const started = Date.now()
      await publishAll([event(1, { scan_id: 'first' })])
      await waitUntil(async () => (await total()).total_scans === 1, 2_000, 'the scan in the summary')
      expect(Date.now() - started).toBeLessThan(2_000)
    })

    it('counts every scan published while it was stopped exactly once after a restart', async () => {
      await analytics!.stop()
      analytics = undefined
      await publishAll(Array.from({ length: 25 }, (_, i) => nth(i, 'down')))
      await start()
      await waitUntil(async () => (await total()).total_scans === 26, 5_000, '26 scans')
      await Bun.sleep(300)
      expect(await total()).toEqual({ code: 'Code0001', total_scans: 26, unique_scans: 25 })
    })

    it('counts a scan delivered twice, in batches with different message ids, once', async () => {
      const js = bus.connection.jetstream()
      const again = new TextEncoder().encode(JSON.stringify([nth(3, 'down')]))
      await js.publish(SCAN_BATCH_SUBJECT, again)
      const { seq } = await js.publish(SCAN_BATCH_SUBJECT, again, { msgID: 'another-id' })
      // Both messages applied and acknowledged (not merely delivered), then the total is read.
      const jsm = await bus.connection.jetstreamManager()
      await waitUntil(async () => (await jsm.consumers.info(SCAN_BATCH_STREAM, 'analytics')).ack_floor.stream_seq >= seq, 5_000, 'the consumer to apply both')
      expect((await total()).total_scans).toBe(26)
    })

    it('loses and doubles nothing when stopped in the middle of a stream of scans', async () => {
      const scans = Array.from({ length: 3000 }, (_, i) => nth(i, 'mid'))
      const publishing = publishAll(scans)
      await Bun.sleep(20)
      await analytics!.stop()
      await publishing
      await start()
      await waitUntil(async () => (await total()).total_scans === 3026, 10_000, '3026 scans')
      await Bun.sleep(300)
      expect(await total()).toEqual({ code: 'Code0001', total_scans: 3026, unique_scans: 50 })
    }, 20_000)

    it('applies 20 000 scans published at once (ingestion rate logged)', async () => {
      const before = (await total()).total_scans
      const scans = Array.from({ length: 20_000 }, (_, i) => nth(i, 'bulk'))
      const started = performance.now()
      await publishAll(scans)
      const published = performance.now()
      await waitUntil(async () => (await total()).total_scans === before + 20_000, 30_000, 'every bulk scan')
      const applied = performance.now()
      const rate = (ms: number) => Math.round(20_000 / (ms / 1000))
      console.log(`[bench] 20000 scans: published in ${Math.round(published - started)} ms (${rate(published - started)}/s), applied end to end in ${Math.round(applied - started)} ms (${rate(applied - started)}/s)`)
      expect((await total()).total_scans).toBe(before + 20_000)
    }, 60_000)

    it('applies 20 000 scans that waited in the stream while it was stopped (consumer rate logged)', async () => {
      const before = (await total()).total_scans
      await analytics!.stop()
      await publishAll(Array.from({ length: 20_000 }, (_, i) => nth(i, 'waiting')))
      const started = performance.now()
      await start()
      await waitUntil(async () => (await total()).total_scans === before + 20_000, 30_000, 'every waiting scan')
      const ms = performance.now() - started
      console.log(`[bench] 20000 waiting scans applied in ${Math.round(ms)} ms (${Math.round(20_000 / (ms / 1000))}/s)`)
      await Bun.sleep(200)
      expect((await total()).total_scans).toBe(before + 20_000)
    }, 60_000)
  })
