import { type Bus, type ScanPublisher, scanSubject } from '@lr/proto'
import { errorFields, log } from './log'
import { countScanPublished } from './metrics'

/**
 * One-process mode: each scan is an event on scanSubject(code) of the bus. A scan costs one
 * promise here (its publish's), counted while under way; no set of promises and no chain per
 * scan: this runs once per redirect on the thread that answers them.
 */
export function createBusScanPublisher(bus: Bus): ScanPublisher {
  let inFlight = 0
  let idle: (() => void)[] = []
  const settled = () => {
    if (--inFlight > 0 || idle.length === 0) return
    const waiting = idle
    idle = []
    for (const resolve of waiting) resolve()
  }
  const failed = (error: unknown) => {
    log().error(errorFields(error), 'scan not published')
    settled()
  }
  return {
    publish(event) {
      try {
        inFlight++
        bus.publish(scanSubject(event.code), event).then(settled, failed)
        countScanPublished()
      } catch (error) {
        failed(error)
      }
    },
    flush: () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve))),
    pending: () => inFlight,
    close() {},
  }
}
