import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect, type NatsConnection } from 'nats'
import { ENTRY_POINTS } from '../deploy/entry-points'
import { startNats, type NatsServer } from './harness/nats'
import { freePort, waitUntil } from './harness/ports'
import { skipReason } from './harness/servers'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'
import { SCAN_BATCH_STREAM, SCAN_STREAM } from '@lr/platform/scan-stream-config'

// SCAN_RELAY: whether the analytics process (its entry point, as deployed) fills the public SCANS stream.
const ROOT = join(import.meta.dir, '..')
/** A browser's user agent: scans from it are applied (a bot's are dropped unread). */
const BROWSER = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'

const skip = skipReason('nats-server')
if (skip) describe.skip(`SCAN_RELAY (${skip})`, () => {})
else
  describe('SCAN_RELAY of the analytics process (real nats-server -js)', () => {
    let server: NatsServer
    let nc: NatsConnection
    let dataDir: string
    beforeAll(async () => {
      server = await startNats({ jetstream: true })
      nc = await connect({ servers: server.url })
      dataDir = mkdtempSync(join(tmpdir(), 'lr-relay-switch-'))
    })
    afterAll(async () => {
      await nc?.close()
      await server?.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    /** Runs the analytics entry point with SCAN_RELAY, publishes three scans, and returns how many SCANS holds. */
    async function scansInPublicStream(relay: '0' | '1', first: number): Promise<number> {
      const port = await freePort()
      const env = { ...Bun.env, TRANSPORT: 'nats', NATS_URL: server.url, DATA_DIR: dataDir, HEALTH_PORT: String(port), SCAN_RELAY: relay, LOG_LEVEL: 'warn' }
      const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.analytics)], { cwd: ROOT, env, stdout: 'ignore', stderr: 'ignore' })
      try {
        await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, 15_000, 'analytics ready')
        const publisher = createJetStreamScanPublisher(nc)
        for (let n = first; n < first + 3; n++)
          publisher.publish({ scan_id: `s-${n}`, code: 'Code0001', scanned_at: Date.now(), user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE' })
        await publisher.flush()
        publisher.close()
        const jsm = await nc.jetstreamManager()
        // Applied by analytics: the batch consumer has nothing left.
        await waitUntil(async () => {
          const info = await jsm.consumers.info(SCAN_BATCH_STREAM, 'analytics')
          return info.num_pending + info.num_ack_pending === 0
        }, 10_000, 'analytics to apply the scans')
        if (relay === '1') await waitUntil(async () => (await jsm.streams.info(SCAN_STREAM).catch(() => null))?.state.messages === first + 2, 10_000, 'the relay')
        else await Bun.sleep(500)
        return (await jsm.streams.info(SCAN_STREAM).catch(() => null))?.state.messages ?? 0
      } finally {
        proc.kill('SIGTERM')
        await proc.exited
      }
    }

    it('started on a backlog, gives the relay\'s share to ingestion until it has caught up, then relays every scan', async () => {
      const jsm = await nc.jetstreamManager()
      for (const stream of [SCAN_STREAM, SCAN_BATCH_STREAM]) await jsm.streams.delete(stream).catch(() => false)
      const backlog = 200_000
      const publisher = createJetStreamScanPublisher(nc, { maxBuffer: backlog + 1 })
      for (let n = 0; n < backlog; n++)
        publisher.publish({ scan_id: `b-${n}`, code: 'Code0002', scanned_at: Date.now(), user_agent: BROWSER, visitor_id: (n % 5000).toString(16).padStart(64, '0'), country: 'DE' })
      await publisher.flush()
      publisher.close()
      const port = await freePort()
      const env = { ...Bun.env, TRANSPORT: 'nats', NATS_URL: server.url, DATA_DIR: mkdtempSync(join(tmpdir(), 'lr-relay-backlog-')), HEALTH_PORT: String(port), LOG_LEVEL: 'warn' }
      const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.analytics)], { cwd: ROOT, env, stdout: 'ignore', stderr: 'ignore' })
      try {
        let relayedWhenApplied = -1
        await waitUntil(async () => {
          const info = await jsm.consumers.info(SCAN_BATCH_STREAM, 'analytics').catch(() => null)
          if (!info || info.num_pending + info.num_ack_pending > 0 || info.delivered.stream_seq === 0) return false
          relayedWhenApplied = (await jsm.streams.info(SCAN_STREAM).catch(() => null))?.state.messages ?? 0
          return true
        }, 60_000, 'analytics to apply the backlog')
        // While ingestion was behind, the relay took a round (up to 4,000 scans) per second: a few
        // hundred to 8k here; not giving way (or not told, when the backlog was there before the
        // relay started), it had copied 125k of the 200k by then.
        expect(relayedWhenApplied).toBeLessThan(backlog / 4)
        await waitUntil(async () => (await jsm.streams.info(SCAN_STREAM).catch(() => null))?.state.messages === backlog, 60_000, 'the relay to catch up')
      } finally {
        proc.kill('SIGTERM')
        await proc.exited
        rmSync(env.DATA_DIR, { recursive: true, force: true })
        for (const stream of [SCAN_STREAM, SCAN_BATCH_STREAM]) await jsm.streams.delete(stream).catch(() => false)
      }
    }, 120_000)

    it('with SCAN_RELAY=0 writes nothing to SCANS; with the default 1 every scan lands there', async () => {
      expect(await scansInPublicStream('0', 1)).toBe(0)
      // The relay starts from the first batch: the three scans before it and the three after.
      expect(await scansInPublicStream('1', 4)).toBe(6)
    }, 60_000)
  })
