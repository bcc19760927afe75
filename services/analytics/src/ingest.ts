import { TypeCompiler } from '@sinclair/typebox/compiler'
import { ScanEvent } from '@lr/proto/scans'
import type { Agent } from './enrich'
import type { AnalyticsStore, FallbackScan, StoredScan } from './ports'

// Imports stay few on purpose: the one-process ingestion Worker loads this file, and every module
// it loads is resident in that Worker's own heap (ingest-worker.ts).

// The compiled check is made here, not with @lr/proto's checkOf, which would load the whole
// contract index (every schema, TypeBox's Value module) into that Worker for one schema.
const isScanEvent = TypeCompiler.Compile(ScanEvent)

export interface IngestResult {
  /** Events taken in, whatever became of them. */
  received: number
  /** Scans and fallback scans stored for the first time. */
  applied: number
  /** Events that are no ScanEvent, dropped. */
  malformed: number
  /** Scans by a bot's User-Agent, dropped. */
  bots: number
}

/**
 * Applies a batch of scan events as delivered (raw payloads): malformed events are dropped and
 * counted, so are bots by isbot's list; the rest are enriched and stored, once each. Rejects only
 * when the store does.
 */
export function createScanIngest(store: Pick<AnalyticsStore, 'applyScans' | 'applyFallbacks'>, agentOf: (userAgent: string) => Agent) {
  return async (events: unknown[], writing?: () => boolean): Promise<IngestResult> => {
    const scans: StoredScan[] = []
    const fallbacks: FallbackScan[] = []
    let malformed = 0
    let bots = 0
    for (const event of events) {
      if (!isScanEvent.Check(event)) {
        malformed++
        continue
      }
      const { device, os, browser, bot } = agentOf(event.user_agent)
      if (bot) {
        bots++
        continue
      }
      const { scan_id, code, scanned_at, country, visitor_id } = event
      if (event.outcome === 'fallback') {
        fallbacks.push({ scan_id, code, scanned_at })
        continue
      }
      scans.push({ scan_id, code, scanned_at, country, device, os, browser, visitor_id })
    }
    // Fallbacks first: a batch whose scans fail is redelivered whole, and both are idempotent.
    const fresh = fallbacks.length === 0 ? 0 : await store.applyFallbacks(fallbacks)
    return { received: events.length, applied: fresh + (await store.applyScans(scans, writing)), malformed, bots }
  }
}
