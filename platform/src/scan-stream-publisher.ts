import { Events, type NatsConnection } from 'nats'
import { Fifo } from './fifo'
import type { ScanSpool } from './scan-spool'
import { errorFields, log } from './log'
import { countScanPublished, scansDropped, trackBufferedScans } from './metrics'
import type { ScanPublisher } from '@lr/proto'
import { type ScanEvent, scanSubject } from '@lr/proto'
import { ensureScanStream, SCAN_STREAM } from './scan-stream-config'
import { isMissingStream } from './jetstream-faults'

export interface JetStreamPublisherOptions {
  /** Scans held (queued and in flight) while NATS is unreachable; beyond it the oldest are dropped. Default 10 000. */
  maxBuffer?: number
  /** Publishes awaiting their PubAck at once while healthy. Default 1000. */
  maxInFlight?: number
  /** Wait for a PubAck before the scan is retried. Default 2000 ms. */
  timeoutMs?: number
  /** Pause between probes while publishing fails. Default 250 ms. */
  retryMs?: number
  /**
   * Where scans wait once `maxBuffer` is full (the broker away or slow): on disk, read back in
   * order when it answers again. Without one, a full buffer drops its oldest scan.
   */
  spool?: ScanSpool
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
  const { maxBuffer = 10_000, maxInFlight = 1000, timeoutMs = 2000, retryMs = 250, spool } = opts
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

  const inMemory = () => queue.length + inFlight
  const pending = () => inMemory() + (spool?.size() ?? 0)
  const untrack = trackBufferedScans(pending)
  // Every dropped scan reaches a log line: the count since the last report, every few seconds.
  let unreported = 0
  let report: Timer | undefined
  const reportDropped = () => {
    clearTimeout(report)
    report = undefined
    if (unreported > 0) log().error({ dropped: unreported, dropped_total: dropped, max_buffer: maxBuffer }, 'scans dropped: buffer full while JetStream was unreachable or too slow')
    unreported = 0
  }

  function settle(): void {
    if (pending() > 0 && !closed) return
    for (const resolve of waiters) resolve()
    waiters = []
  }

  /**
   * Adds a scan. A full buffer sends new scans to the spool, and keeps doing so while the spool
   * holds any (so they leave in order); a full spool, or a full buffer without one, drops a scan:
   * without a spool the oldest queued (or this one, when it is the oldest), else this one.
   */
  function hold(event: ScanEvent, front: boolean): void {
    if (!front && spool && (spool.size() > 0 || inMemory() >= maxBuffer)) {
      if (spool.append(event)) return
      return drop()
    }
    if (inMemory() >= maxBuffer) {
      drop()
      if (front || queue.length === 0) return
      queue.shift()
    }
    if (front) queue.unshift(event)
    else queue.push(event)
  }

  function drop(): void {
    dropped++
    unreported++
    scansDropped.inc()
    if (droppedThisOutage++ === 0) log().error({ max_buffer: maxBuffer, spool_bytes: spool?.bytes() ?? null }, 'scan buffer full (JetStream unreachable or too slow): dropping scans')
    report ??= setTimeout(reportDropped, 5000)
  }

  function failed(event: ScanEvent, error: unknown): void {
    if (healthy) log().warn(errorFields(error), 'publishing scans to JetStream failed: holding them and retrying')
    healthy = false
    hold(event, true)
    if (isMissingStream(error)) recreateStream()
    retry ??= setTimeout(() => {
      retry = undefined
      pump()
    }, retryMs)
  }

  /**
   * A broker that lost its JetStream store (restarted without its volume) or a stream deleted by
   * hand answers every publish "no responders": made again, at most once a second, the scans
   * held meanwhile follow; without it they would wait for a restart of this process.
   */
  let recreatedAt = 0
  function recreateStream(): void {
    if (Date.now() - recreatedAt < 1000) return
    recreatedAt = Date.now()
    nc.jetstreamManager()
      .then(ensureScanStream)
      .then(() => log().warn({ stream: SCAN_STREAM }, 'the scan stream was missing: made it again'))
      .catch((error) => log().warn({ stream: SCAN_STREAM, ...errorFields(error) }, 'the scan stream is missing and could not be made yet'))
  }

  function send(event: ScanEvent): void {
    inFlight++
    const done = (error?: unknown) => {
      inFlight--
      if (closed) return settle()
      if (error !== undefined) return failed(event, error)
      countScanPublished()
      if (!healthy) log().info({ dropped_this_outage: droppedThisOutage }, 'JetStream answers again')
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
    // Spooled scans come back a segment at a time, once the buffer has room and the broker answers.
    while (spool && spool.size() > 0 && healthy && connected && !retry && !closed && queue.length < maxBuffer / 2) {
      for (const event of spool.take()) queue.push(event)
    }
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
        log().error(errorFields(error), 'scan not published')
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
      // What is still queued waits on disk for the next start (JetStream drops a duplicate by scan_id).
      if (spool) while (queue.length > 0) if (!spool.append(queue.shift()!)) drop()
      spool?.close()
      if (pending() > 0) log()[spool ? 'warn' : 'error']({ pending: pending(), spooled: spool?.size() ?? 0 }, 'closing with scans not published')
      reportDropped()
      untrack()
      settle()
    },
  }
}
