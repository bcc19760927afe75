import type { Bus } from './bus'
import { type ScanEvent, scanSubject } from './scans'

/**
 * How the resolver hands a counted scan on (api-contract.md §5). Adapters:
 * createBusScanPublisher (one process, the in-process bus) and createJetStreamScanPublisher
 * (TRANSPORT=nats, the SCANS stream; in scan-stream.ts so importing proto never pulls `nats`).
 */
export interface ScanPublisher {
  /** Hands the scan on in the background: never blocks the redirect, never throws. */
  publish(event: ScanEvent): void
  /** Resolves once every scan handed over so far was published (or dropped); for shutdown. */
  flush(): Promise<void>
  /** Scans handed over and not yet published. */
  pending(): number
  /** Stops retrying; scans still pending are given up (flush first to keep them). */
  close(): void
}

/** One-process mode: each scan is an event on scanSubject(code) of the bus. */
export function createBusScanPublisher(bus: Bus): ScanPublisher {
  const inFlight = new Set<Promise<void>>()
  return {
    publish(event) {
      try {
        const sent: Promise<void> = bus
          .publish(scanSubject(event.code), event)
          .catch((error) => console.error(`[scans] scan not published: ${(error as Error)?.message ?? error}`))
          .finally(() => inFlight.delete(sent))
        inFlight.add(sent)
      } catch (error) {
        console.error('[scans] scan not published:', error)
      }
    },
    async flush() {
      await Promise.all([...inFlight])
    },
    pending: () => inFlight.size,
    close() {},
  }
}
