import { type Bus, type ScanPublisher, scanSubject } from '@lr/proto'

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
