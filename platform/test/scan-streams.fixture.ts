import { afterAll, beforeAll, beforeEach } from 'bun:test'
import { connect, type JetStreamManager, type NatsConnection } from 'nats'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { ensureScanBatchStream, ensureScanStream, SCAN_BATCH_STREAM, SCAN_STREAM } from '@lr/platform/scan-stream-config'
import type { ScanEvent } from '@lr/proto'

/** Scan n of `code` (Code0001 unless given). */
export const event = (n: number, code = 'Code0001'): ScanEvent => ({
  scan_id: `scan-${n}`, code, scanned_at: 1_736_510_400_000 + n, user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE',
})
export const range = (from: number, to: number, code?: (n: number) => string) =>
  Array.from({ length: to - from + 1 }, (_, i) => event(from + i, code?.(from + i)))
export const ids = (events: unknown[]) => events.map((e) => (e as ScanEvent).scan_id)

export interface ScanStreams {
  server: NatsServer
  nc: NatsConnection
  jsm: JetStreamManager
  /** Every scan of every batch message in SCAN_BATCHES, in stream order. */
  storedScans(): Promise<ScanEvent[]>
}

/**
 * For a describe block of the scan streams' tests: a private `nats-server -js` for the block, one
 * connection that reconnects, and both streams made afresh (empty) before each test.
 */
export function useScanStreams(): ScanStreams {
  const streams = {
    async storedScans() {
      const { jsm } = streams
      const { first_seq, last_seq, messages } = (await jsm.streams.info(SCAN_BATCH_STREAM)).state
      const scans: ScanEvent[] = []
      for (let seq = first_seq; messages > 0 && seq <= last_seq; seq++) scans.push(...(await jsm.streams.getMessage(SCAN_BATCH_STREAM, { seq })).json<ScanEvent[]>())
      return scans
    },
  } as ScanStreams
  beforeAll(async () => {
    streams.server = await startNats({ jetstream: true })
    streams.nc = await connect({ servers: streams.server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 })
    streams.jsm = await streams.nc.jetstreamManager()
  })
  afterAll(async () => {
    await streams.nc?.close()
    await streams.server?.stop()
  })
  beforeEach(async () => {
    for (const stream of [SCAN_STREAM, SCAN_BATCH_STREAM]) await streams.jsm.streams.delete(stream).catch(() => false)
    await ensureScanStream(streams.jsm)
    await ensureScanBatchStream(streams.jsm)
  })
  return streams
}
