import { afterEach, beforeEach } from 'bun:test'
import { type Bus, SCAN_BATCH_EVENT, scanBatchOf, type ScanEvent } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'

/** Scan n of `code` (Code0001 unless given). */
export const event = (n: number, code = 'Code0001'): ScanEvent => ({
  scan_id: `scan-${n}`, code, scanned_at: 1_736_510_400_000 + n, user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE',
})
/** Scans from..to (both included) of `code`. */
export const events = (from: number, to: number, code = 'Code0001') => Array.from({ length: to - from + 1 }, (_, i) => event(from + i, code))

/** A fresh in-process bus for each test of the file, closed after it; read it through the getter. */
export function useLocalBus(): { bus(): Bus; handOver(scans: ScanEvent[]): Promise<void> } {
  let bus: Bus
  beforeEach(() => {
    bus = createLocalBus()
  })
  afterEach(() => bus.close())
  return {
    bus: () => bus,
    // A resolver's hand-over: the scans of one turn as one batch on scan-batches.
    handOver: (scans) => bus.publish(SCAN_BATCH_EVENT, scanBatchOf(scans)),
  }
}
