import { type Bus, SCAN_BATCH_EVENT, type ScanBatch, scanBatchOf, type ScanEvent, type ScanPublisher, scanSubject } from '@lr/proto'
import { errorFields, log } from './log'
import { countScanPublished, reportMetrics, scansPublished } from './metrics'

/**
 * One-process mode: scans travel the in-process bus as ScanBatch events on SCAN_BATCH_EVENT,
 * which the consumers inside the process read (analytics, webhooks), and each scan also as an
 * event of its own on scanSubject(code) for whoever subscribes there (README "Scan events"). A
 * batch is read for those only when the bus has a subscriber for one of its codes: the product's
 * own consumers take the batches, so under load the thread that holds the bus does not parse the
 * scans a resolver thread handed over, nor publish each (bench/ANALYSIS.md, eighteenth session).
 * `publish` holds the scans of one event-loop turn and sends them as one batch.
 */
export function createBusScanPublisher(bus: Bus): ScanPublisher {
  // No buffer, spool or drop here: lr_scans_buffered, _dropped and _lost are JetStream's publisher's.
  reportMetrics(scansPublished)
  /** Scans handed over whose events are not yet delivered. */
  let inFlight = 0
  let held: ScanEvent[] = []
  let idle: (() => void)[] = []
  const settled = (scans: number) => {
    inFlight -= scans
    if (inFlight > 0 || held.length > 0 || idle.length === 0) return
    const waiting = idle
    idle = []
    for (const resolve of waiting) resolve()
  }
  const failed = (error: unknown, scans: number) => {
    log().error({ scans, ...errorFields(error) }, 'scans not published')
    settled(scans)
  }
  const subscribed = (code: string) => bus.subscribed?.(scanSubject(code)) ?? true

  /** Each scan of the batch on scanSubject(code), for the codes someone listens to. */
  function publishEach(batch: ScanBatch): void {
    if (!batch.codes.split(' ').some(subscribed)) return
    for (const event of JSON.parse(batch.events) as ScanEvent[]) {
      if (!subscribed(event.code)) continue
      inFlight++
      bus.publish(scanSubject(event.code), event).then(() => settled(1), (error) => failed(error, 1))
    }
  }

  function publishBatch(batch: ScanBatch): void {
    inFlight += batch.count
    try {
      bus.publish(SCAN_BATCH_EVENT, batch).then(() => settled(batch.count), (error) => failed(error, batch.count))
      countScanPublished(batch.count)
    } catch (error) {
      failed(error, batch.count)
    }
    try {
      publishEach(batch)
    } catch (error) {
      log().error(errorFields(error), 'scan events not published on scans.<code>')
    }
  }

  function sendHeld(): void {
    const events = held
    held = []
    if (events.length > 0) publishBatch(scanBatchOf(events))
  }

  return {
    publish(event) {
      if (held.push(event) === 1) setImmediate(sendHeld)
    },
    publishBatch,
    flush: () => (inFlight === 0 && held.length === 0 ? Promise.resolve() : new Promise<void>((resolve) => idle.push(resolve))),
    pending: () => inFlight + held.length,
    close() {},
  }
}
