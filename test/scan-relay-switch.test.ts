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

    it('with SCAN_RELAY=0 writes nothing to SCANS; with the default 1 every scan lands there', async () => {
      expect(await scansInPublicStream('0', 1)).toBe(0)
      // The relay starts from the first batch: the three scans before it and the three after.
      expect(await scansInPublicStream('1', 4)).toBe(6)
    }, 60_000)
  })
