import { type Bus, type ScanPublisher, scanSubject } from '@lr/proto'
import { errorFields, log } from './log'
import { countScanPublished } from './metrics'

/** One-process mode: each scan is an event on scanSubject(code) of the bus. */
export function createBusScanPublisher(bus: Bus): ScanPublisher {
  const inFlight = new Set<Promise<void>>()
  return {
    publish(event) {
      try {
        const sent: Promise<void> = bus
          .publish(scanSubject(event.code), event)
          .catch((error) => log().error(errorFields(error), 'scan not published'))
          .finally(() => inFlight.delete(sent))
        inFlight.add(sent)
        countScanPublished()
      } catch (error) {
        log().error(errorFields(error), 'scan not published')
      }
    },
    async flush() {
      await Promise.all([...inFlight])
    },
    pending: () => inFlight.size,
    close() {},
  }
}
