import { Events, type NatsConnection } from 'nats'
import { Fifo } from './fifo'
import type { ScanPublisher } from '@lr/proto'
import { type ScanEvent, scanSubject } from '@lr/proto'

export interface JetStreamPublisherOptions {
  /** Scans held (queued and in flight) while NATS is unreachable; beyond it the oldest are dropped. Default 10 000. */
  maxBuffer?: number
  /** Publishes awaiting their PubAck at once while healthy. Default 1000. */
  maxInFlight?: number
  /** Wait for a PubAck before the scan is retried. Default 2000 ms. */
  timeoutMs?: number
  /** Pause between probes while publishing fails. Default 250 ms. */
  retryMs?: number
}

const encoder = new TextEncoder()

/**
 * Publishes scans to the SCANS stream with `Nats-Msg-Id = scan_id`, so a retry after a lost
 * PubAck is stored once. `publish` only enqueues. Many publishes are in flight while NATS
 * answers; while the connection is down nothing is sent (scans wait here, not in the client's
 * reconnect buffer); after a failure the scan goes back to the front and a single probe is sent
 * every `retryMs` until one succeeds. The buffer is bounded: when full, the oldest waiting scan
 * is dropped (one already in flight cannot be taken back), counted in `dropped()` and logged
 * once per outage.
 */
export function createJetStreamScanPublisher(nc: NatsConnection, opts: JetStreamPublisherOptions = {}): ScanPublisher & { dropped(): number } {
  const { maxBuffer = 10_000, maxInFlight = 1000, timeoutMs = 2000, retryMs = 250 } = opts
  const js = nc.jetstream({ timeout: timeoutMs })
  const queue = new Fifo<ScanEvent>()
  let inFlight = 0
  let healthy = true
  let retry: Timer | undefined
  let closed = false
  let dropped = 0
  let droppedThisOutage = 0
  let waiters: (() => void)[] = []
  let connected = !nc.isClosed()
  const statuses = nc.status() as AsyncIterable<{ type: string }> & { stop?: () => void }
  void (async () => {
    for await (const status of statuses) {
      if (status.type === Events.Disconnect) connected = false
      if (status.type === Events.Reconnect) {
        connected = true
        pump()
      }
    }
  })().catch(() => undefined)

  const pending = () => queue.length + inFlight

  function settle(): void {
    if (pending() > 0 && !closed) return
    for (const resolve of waiters) resolve()
    waiters = []
  }

  /** Adds a scan; a full buffer drops its oldest queued scan (or this one, when it is the oldest). */
  function hold(event: ScanEvent, front: boolean): void {
    if (pending() >= maxBuffer) {
      dropped++
      if (droppedThisOutage++ === 0) console.error(`[scans] ${maxBuffer} scans waiting for JetStream (unreachable or too slow): dropping the oldest`)
      if (front || queue.length === 0) return
      queue.shift()
    }
    if (front) queue.unshift(event)
    else queue.push(event)
  }

  function failed(event: ScanEvent, error: unknown): void {
    if (healthy) console.error(`[scans] publishing to JetStream failed, holding scans and retrying: ${(error as Error)?.message ?? error}`)
    healthy = false
    hold(event, true)
    retry ??= setTimeout(() => {
      retry = undefined
      pump()
    }, retryMs)
  }

  function send(event: ScanEvent): void {
    inFlight++
    const done = (error?: unknown) => {
      inFlight--
      if (closed) return settle()
      if (error !== undefined) return failed(event, error)
      if (!healthy) console.log(`[scans] JetStream answers again${droppedThisOutage ? `; ${droppedThisOutage} scans were dropped` : ''}`)
      healthy = true
      droppedThisOutage = 0
      pump()
    }
    try {
      js.publish(scanSubject(event.code), encoder.encode(JSON.stringify(event)), { msgID: event.scan_id }).then(() => done(), (error) => done(error ?? 'failed'))
    } catch (error) {
      done(error ?? 'failed')
    }
  }

  function pump(): void {
    const limit = healthy ? maxInFlight : 1
    while (!closed && connected && !retry && inFlight < limit && queue.length > 0) send(queue.shift()!)
    settle()
  }

  return {
    publish(event) {
      if (closed) return
      try {
        hold(event, false)
        pump()
      } catch (error) {
        console.error('[scans] scan not published:', error)
      }
    },
    flush: () => (pending() === 0 || closed ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    pending,
    dropped: () => dropped,
    close() {
      if (closed) return
      closed = true
      statuses.stop?.()
      clearTimeout(retry)
      retry = undefined
      if (pending() > 0) console.error(`[scans] closing with ${pending()} scans not published`)
      settle()
    },
  }
}
