import { Events, headers as natsHeaders, type MsgHdrs, type NatsConnection } from 'nats'
import { Fifo } from './fifo'
import type { ScanSpool } from './scan-spool'
import { type GuardedSpoolOptions, scanSpoolGuard } from './scan-spool-guard'
import { errorFields, log } from './log'
import { countScanPublished, reportMetrics, scansBuffered, scansDropped, scansPublished, trackBufferedScans } from './metrics'
import type { ScanEvent, ScanPublisher } from '@lr/proto'
import { codesHeader, ensureScanBatchStream, SCAN_BATCH_STREAM, SCAN_BATCH_SUBJECT, SCAN_CODES_HEADER } from './scan-stream-config'
import { streamRestorer } from './jetstream-faults'
import { watchRefusals } from './jetstream-refusals'

export interface JetStreamPublisherOptions {
  /** Scans held (queued, in flight and to be re-sent) while NATS is unreachable; beyond it the oldest are dropped. Default 10 000. */
  maxBuffer?: number
  /** Batches awaiting their PubAck at once while healthy. Default 4. */
  maxInFlight?: number
  /** Scans in one batch at most. Default 500. */
  maxBatch?: number
  /** Bytes of one batch at most (under the broker's max_payload, 1 MB by default). Default 256 KiB. */
  maxBatchBytes?: number
  /** Wait for a PubAck before the batch is re-sent. Default 2000 ms. */
  timeoutMs?: number
  /** Pause between probes while publishing fails. Default 250 ms. */
  retryMs?: number
  /**
   * Where scans wait while the broker is away or failing (from the first failure, so a process
   * killed during an outage loses only the batches it had sent) and once `maxBuffer` is full
   * (the broker slow): on disk, read back in order when it answers again. Without one, scans
   * wait in memory, and a full buffer drops its oldest scan.
   */
  spool?: ScanSpool
  spoolGuard?: GuardedSpoolOptions // how its failures are probed and reported (scan-spool-guard.ts)
}

/** Scans sent as one message; `id` is its Nats-Msg-Id, kept when the batch is re-sent. */
interface Batch {
  id: string
  events: ScanEvent[]
  body: Uint8Array
  /** The header naming the batch's codes (SCAN_CODES_HEADER), when they are few enough. */
  codes?: string
}

const encoder = new TextEncoder()

/**
 * Publishes scans to the SCAN_BATCHES stream, many per message: a batch is what queued while
 * the previous batches awaited their PubAck (one scan alone when traffic is light, up to
 * `maxBatch` under load), so batches form by themselves without a timer and add no latency.
 * `publish` only enqueues; sending waits for the end of the current event-loop turn, so the
 * scans of one turn leave together. A batch whose publish failed is re-sent whole, with the same
 * `Nats-Msg-Id`, so one stored before its PubAck was lost is stored once. While the connection
 * is down nothing is sent (scans wait here, not in the client's reconnect buffer); after a
 * failure one batch at a time probes every `retryMs` until one succeeds. The buffer is bounded:
 * when full, new scans go to the spool, or without one the oldest queued scan is dropped (one in
 * a batch already sent cannot be taken back), counted in `dropped()` and logged.
 */
export function createJetStreamScanPublisher(nc: NatsConnection, opts: JetStreamPublisherOptions = {}): ScanPublisher & { dropped(): number; keepsScans(): boolean } {
  const { maxBuffer = 10_000, maxInFlight = 4, maxBatch = 500, maxBatchBytes = 256 * 1024, timeoutMs = 2000, retryMs = 250 } = opts
  reportMetrics(scansPublished, scansBuffered, scansDropped)
  const spool = opts.spool && scanSpoolGuard(opts.spool, opts.spoolGuard) // a failed write costs its scans, never the process
  const js = nc.jetstream({ timeout: timeoutMs })
  const origin = `${process.pid}-${crypto.randomUUID().slice(0, 8)}`
  let sequence = 0
  const queue = new Fifo<ScanEvent>()
  const resend = new Fifo<Batch>()
  let resendScans = 0
  let batchesInFlight = 0
  let scansInFlight = 0
  let healthy = true
  let retry: Timer | undefined
  let scheduled = false
  let closed = false
  let dropped = 0
  let droppedThisOutage = 0
  let waiters: (() => void)[] = []
  let connected = !nc.isClosed()
  const statuses = nc.status() as AsyncIterable<{ type: string }> & { stop?: () => void }
  void (async () => {
    for await (const status of statuses) {
      if (status.type === Events.Disconnect) {
        connected = false
        spillQueue()
      }
      if (status.type === Events.Reconnect) {
        connected = true
        pump()
      }
    }
  })().catch(() => undefined)

  const inMemory = () => queue.length + scansInFlight + resendScans
  /** The broker is away (disconnected) or failing (a publish failed and no probe has succeeded since). */
  const outage = () => !connected || !healthy
  const pending = () => inMemory() + (spool?.size() ?? 0)
  const untrack = trackBufferedScans(pending)
  // A full stream store refuses every batch: counted, logged and shown on /readyz (degraded).
  const refusals = watchRefusals(SCAN_BATCH_STREAM, spool ? 'scans wait in the spool on disk, then are dropped' : 'scans wait in memory, then are dropped')
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
   * Adds a scan. During an outage, or with a full buffer, new scans go to the spool, and keep
   * going there while the spool holds any (so they leave in order); a full spool, or a full
   * buffer without one, drops a scan: without a spool the oldest queued (or this one, when none
   * is queued), else this one. A spool whose write failed counts as none until it takes writes
   * again (checked last: a healthy publisher's path is as it was).
   */
  function hold(event: ScanEvent): void {
    if (spool && (spool.size() > 0 || inMemory() >= maxBuffer || outage()) && spool.writable()) {
      if (spool.append(event)) return
      return drop()
    }
    if (inMemory() >= maxBuffer) {
      drop()
      if (queue.length === 0) return
      queue.shift()
    }
    queue.push(event)
  }

  function drop(): void {
    dropped++
    unreported++
    scansDropped.inc()
    // Once per outage, and not again while a count is due: drops that start again at every turn (a full buffer, its spool failing) are that count's.
    if (droppedThisOutage++ === 0 && report === undefined) log().error({ max_buffer: maxBuffer, spool_bytes: spool?.bytes() ?? null, spool_writable: spool?.writable() ?? null }, 'scan buffer full (JetStream unreachable or too slow): dropping scans')
    report ??= setTimeout(reportDropped, 5000)
  }

  /**
   * An outage began: the queued scans (not yet sent) go to the spool too, so a process killed
   * now loses only the batches in flight, which stay in memory to probe the broker with. Only
   * while the spool is empty: a queue refilled from it is older than what it still holds.
   */
  function spillQueue(): void {
    if (!spool || spool.size() > 0 || !spool.writable()) return
    while (queue.length > 0) if (!spool.append(queue.shift()!)) drop()
    spool.flush()
  }

  function failed(batch: Batch, error: unknown): void {
    // A refusal for want of room has a line of its own (throttled), with its reason.
    if (!refusals.failed(error) && healthy) log().warn(errorFields(error), 'publishing scans to JetStream failed: holding them and retrying')
    healthy = false
    spillQueue()
    resend.push(batch)
    resendScans += batch.events.length
    if (connected) recreateStream()
    retry ??= setTimeout(() => {
      retry = undefined
      pump()
    }, retryMs)
  }

  const recreateStream = streamRestorer(nc, SCAN_BATCH_STREAM, ensureScanBatchStream)

  /** The queued scans, as many as fit one batch, as one message: a JSON array of scan events. */
  function nextBatch(): Batch | undefined {
    if (queue.length === 0) return undefined
    const events: ScanEvent[] = []
    const parts: string[] = []
    let bytes = 2
    while (queue.length > 0 && events.length < maxBatch) {
      const event = queue.shift()!
      const json = JSON.stringify(event)
      if (events.length > 0 && bytes + json.length + 1 > maxBatchBytes) {
        queue.unshift(event)
        break
      }
      events.push(event)
      parts.push(json)
      bytes += json.length + 1
    }
    return { id: `${origin}-${++sequence}`, events, body: encoder.encode(`[${parts.join(',')}]`), codes: codesHeader(events) }
  }

  function send(batch: Batch): void {
    batchesInFlight++
    scansInFlight += batch.events.length
    const done = (error?: unknown) => {
      batchesInFlight--
      scansInFlight -= batch.events.length
      if (closed) return settle()
      if (error !== undefined) return failed(batch, error)
      countScanPublished(batch.events.length)
      refusals.stored()
      if (!healthy) log().info({ dropped_this_outage: droppedThisOutage }, 'JetStream answers again')
      healthy = true
      droppedThisOutage = 0
      pump()
    }
    try {
      let named: MsgHdrs | undefined
      if (batch.codes !== undefined) {
        named = natsHeaders()
        named.set(SCAN_CODES_HEADER, batch.codes)
      }
      js.publish(SCAN_BATCH_SUBJECT, batch.body, { msgID: batch.id, headers: named }).then(() => done(), (error) => done(error ?? 'failed'))
    } catch (error) {
      done(error ?? 'failed')
    }
  }

  function pump(): void {
    // Spooled scans come back a segment at a time, once the buffer has room and the broker answers.
    while (spool && spool.size() > 0 && healthy && connected && !retry && !closed && queue.length < maxBuffer / 2) {
      const left = spool.size()
      for (const event of spool.take()) queue.push(event)
      if (spool.size() >= left) break // a file it could not close: the next turn tries again
    }
    const limit = healthy ? maxInFlight : 1
    while (!closed && connected && !retry && batchesInFlight < limit) {
      const again = resend.shift()
      if (again) resendScans -= again.events.length
      const batch = again ?? nextBatch()
      if (!batch) break
      send(batch)
    }
    // The turn's spooled scans reach the file now, not when 64 KiB have gathered (a no-op when none).
    spool?.flush()
    settle()
  }

  /** Sends at the end of this event-loop turn: the scans of many redirects in one batch. */
  function schedule(): void {
    if (scheduled) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      pump()
    })
  }

  function publish(event: ScanEvent): void {
    if (closed) return
    try {
      hold(event)
      schedule()
    } catch (error) {
      log().error(errorFields(error), 'scan not published')
    }
  }

  // Scans a stopped process left in the spool leave now, not with the next scan: a resolver
  // restarted after an outage, with no traffic, held them for as long as none came.
  if (spool && spool.size() > 0) schedule()

  return {
    publish,
    // Each scan is held on its own: the buffer, the spool and the batches count scans.
    publishBatch(batch) {
      try {
        for (const event of JSON.parse(batch.events) as ScanEvent[]) publish(event)
      } catch (error) {
        log().error({ scans: batch.count, ...errorFields(error) }, 'scans not published')
      }
    },
    flush: () => (pending() === 0 || closed ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    pending,
    dropped: () => dropped,
    keepsScans: () => spool?.writable() ?? true, // the resolver's /readyz: false while its spool fails
    close() {
      if (closed) return
      closed = true
      statuses.stop?.()
      clearTimeout(retry)
      retry = undefined
      // What is still held waits on disk for the next start (analytics applies a scan once by scan_id).
      if (spool) {
        for (let batch = resend.shift(); batch; batch = resend.shift()) for (const event of batch.events) if (!spool.append(event)) drop()
        resendScans = 0
        while (queue.length > 0) if (!spool.append(queue.shift()!)) drop()
      }
      spool?.close()
      spool?.stop()
      if (pending() > 0) log()[spool ? 'warn' : 'error']({ pending: pending(), spooled: spool?.size() ?? 0 }, 'closing with scans not published')
      reportDropped()
      untrack()
      refusals.close()
      settle()
    },
  }
}
