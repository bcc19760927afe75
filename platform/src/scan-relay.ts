import { createInbox, headers, type JetStreamManager, type Msg, type NatsConnection } from 'nats'
import { FOREIGN, REFUSED, scansAnswerOf } from './scan-puback'
import { type RefusalWatch, watchRefusals } from './jetstream-refusals'
import { scanSubject } from '@lr/proto'
import { CODE_PATTERN } from '@lr/proto/codes'
import { createJetStreamScanSource, type JetStreamSourceOptions } from './scan-stream-source'
import { ensureScanStream, SCAN_BATCH_STREAM, SCAN_STREAM } from './scan-stream-config'

const LEGACY_CONSUMER = 'analytics'
import { log } from './log'
import { streamRestorer } from './jetstream-faults'

export interface ScanRelayOptions {
  /** Durable consumer of SCAN_BATCHES the relays of all analytics replicas share. Default `scans-relay`. */
  durable?: string
  /** Scans published to SCANS at once, awaiting their PubAcks. Default 4000. */
  maxInFlight?: number
  /** Wait for the PubAcks of a round before its batches are delivered again. Default 5000 ms. */
  timeoutMs?: number
  /** Redelivery delay of batches whose scans were not all stored. Default 1000 ms. */
  retryMs?: number
  /** Where the consumer's lag goes (JetStreamSourceOptions.reportLag). Default: this thread's gauges. */
  reportLag?: JetStreamSourceOptions['reportLag']
  /** Longest pause between pulls while ingestion is behind (ScanRelay.giveWay). Default 1000 ms. */
  giveWayMs?: number
  /**
   * Told of each round SCANS refused for want of room, and of each round it stored. Default: a
   * watch of this thread (jetstream-refusals.ts); a relay in a Worker hands both to the thread
   * that serves /metrics and /readyz (scan-relay-in-worker.ts).
   */
  refusals?: Pick<RefusalWatch, 'failed' | 'stored'>
}

/** What waits while SCANS refuses the relay's scans (the refusal's log line says it). */
export const RELAY_REFUSED = 'scans wait in SCAN_BATCHES, and SCANS\'s consumers (the webhooks worker) get none'

export interface ScanRelay {
  start(): Promise<void>
  stop(): Promise<void>
  /**
   * Told whether analytics' ingestion is behind (scans wait in SCAN_BATCHES for it). While it
   * is, the relay pulls and relays a round once per giveWayMs at most: where the two share a machine, the
   * aggregates come first and SCANS catches up once the burst is applied (README "Scan events").
   */
  giveWay(behind: boolean): void
}

const encoder = new TextEncoder()
const LINE_BREAK = /[\r\n]/
/**
 * A scan the relay can publish as README "Scan events" says: on `scans.<code>`, a code's shape
 * (CODE_PATTERN, what the resolver counts), with its scan_id as `Nats-Msg-Id` (a header value: no
 * line break). Anything else in a batch (published by hand, a bug) is dropped with the malformed.
 * Published, `scans.a b` is a protocol error that closes the relay's connection, an id with a line
 * break throws, `scans.` no stream takes: each time the batch came again, so SCANS stopped for
 * good, every batch behind it waiting (scan-relay.test.ts); `scans.*` and `scans.a.b` were stored,
 * on subjects no `scans.<code>` consumer expects.
 */
const isScan = (event: unknown): event is { scan_id: string; code: string } => {
  const { scan_id, code } = (event ?? {}) as { scan_id?: unknown; code?: unknown }
  return typeof scan_id === 'string' && scan_id !== '' && !LINE_BREAK.test(scan_id) && typeof code === 'string' && CODE_PATTERN.test(code)
}

/**
 * Keeps the public SCANS stream one scan per message (README "Scan events"): reads
 * SCAN_BATCHES with its own durable consumer and publishes every scan of a batch on
 * scans.<code>, `Nats-Msg-Id` = scan_id, so a batch relayed twice (a crash before its ack) stores
 * each scan once. A batch is acknowledged only once SCANS stored all of its scans.
 *
 * The publishes are plain core publishes with a reply subject on one inbox, not `js.publish`:
 * the PubAcks come back on one subscription, with no promise and timer per scan; measured on
 * 2 cores that stores ~70k scans/s against ~22k/s (bench/ANALYSIS.md, "Fifth session"). Only
 * JetStream's answers count there (scansAnswerOf): any subscriber of scans.> may answer too.
 * Runs on every analytics replica (their relays share the durable consumer).
 */
/**
 * Before SCAN_BATCHES, analytics read SCANS with the durable consumer `analytics`; nothing reads
 * that one now, and it would keep counting every relayed scan as pending (README, "Upgrading").
 */
async function warnOfLegacyConsumer(jsm: JetStreamManager): Promise<void> {
  const legacy = await jsm.consumers.info(SCAN_STREAM, LEGACY_CONSUMER).catch(() => undefined)
  if (legacy)
    log().warn({ stream: SCAN_STREAM, consumer: LEGACY_CONSUMER, pending: legacy.num_pending, ack_pending: legacy.num_ack_pending },
      `the consumer ${LEGACY_CONSUMER} of ${SCAN_STREAM} is left from a version before ${SCAN_BATCH_STREAM} and nothing reads it: once the old analytics applied what it holds, remove it (nats consumer rm ${SCAN_STREAM} ${LEGACY_CONSUMER})`)
}

export function createScanRelay(nc: NatsConnection, opts: ScanRelayOptions = {}): ScanRelay {
  const { durable = 'scans-relay', maxInFlight = 4000, timeoutMs = 5000, retryMs = 1000, reportLag, giveWayMs = 1000 } = opts
  const own = opts.refusals ? undefined : watchRefusals(SCAN_STREAM, RELAY_REFUSED)
  const refusals = opts.refusals ?? own!
  let ingestBehind = false
  const giveWayWaiters = new Set<() => void>()
  const resume = () => {
    for (const wake of giveWayWaiters) wake()
  }
  /** Before each pull and each round: while ingestion is behind, wait until it caught up or giveWayMs passed. */
  const pace = () =>
    ingestBehind
      ? new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer)
            giveWayWaiters.delete(wake)
            resolve()
          }
          const timer = setTimeout(wake, giveWayMs)
          giveWayWaiters.add(wake)
        })
      : undefined
  const inbox = createInbox()
  // The scans of the current round awaiting a PubAck, by the last token of their reply subject.
  const awaiting = new Set<string>()
  const msgId = headers()
  let next = 0
  let failures = 0
  /** Why the round's first refused scan was refused (JetStream's description), for the log. */
  let refusal: string | undefined
  let onAnswer: (() => void) | undefined
  const replies = nc.subscribe(`${inbox}.*`, {
    callback: (error, msg) => {
      if (error) return
      const answer = scansAnswerOf(msg)
      // Not JetStream's: a core subscriber of scans.> answering the message. SCANS's own answer
      // (or none, and the round's timeout) decides; taken as a PubAck, it had acknowledged a
      // batch whose scans SCANS never stored.
      if (answer === FOREIGN) return
      const token = msg.subject.slice(inbox.length + 1)
      if (!awaiting.delete(token)) return // a late answer of a round given up
      if (answer === REFUSED && failures++ === 0) refusal = refusalOf(msg)
      if (awaiting.size === 0) onAnswer?.()
    },
  })

  /**
   * The reason of a refused publish (scansAnswerOf: REFUSED): an error PubAck's description
   * (`insufficient resources` when the broker's store is full, `maximum messages exceeded`...),
   * or "no responders" for the server's empty 503. Decoded once per failed round, not per scan.
   */
  const refusalOf = (msg: Msg): string =>
    msg.data.length === 0 ? 'no responders (no stream takes the subject)' : String((JSON.parse(msg.string()) as { error: { description?: unknown } }).error.description ?? msg.string())

  const recreateStream = streamRestorer(nc, SCAN_STREAM, ensureScanStream)

  /** Publishes the scans and resolves once SCANS stored every one; rejects (for a redelivery) otherwise. */
  async function relay(events: unknown[]): Promise<void> {
    const scans = events.filter(isScan)
    if (scans.length < events.length) log().warn({ dropped: events.length - scans.length }, 'malformed scans in a batch: not relayed')
    for (let from = 0; from < scans.length; from += maxInFlight) {
      failures = 0
      refusal = undefined
      const answered = new Promise<void>((resolve) => (onAnswer = resolve))
      for (const scan of scans.slice(from, from + maxInFlight)) {
        const token = String(++next)
        awaiting.add(token)
        // One headers object for all: publish encodes it before it returns.
        msgId.set('Nats-Msg-Id', scan.scan_id)
        nc.publish(scanSubject(scan.code), encoder.encode(JSON.stringify(scan)), { reply: `${inbox}.${token}`, headers: msgId })
      }
      let timer: Timer | undefined
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)))
      const outcome = await Promise.race([answered, late])
      clearTimeout(timer)
      if (outcome === 'late' || failures > 0) {
        const missing = awaiting.size + failures
        awaiting.clear()
        if (failures > 0) refusals.failed({ description: refusal })
        recreateStream()
        throw new Error(`${missing} scans not stored in ${SCAN_STREAM}: ${refusal ?? `no answer in ${timeoutMs} ms`}`)
      }
    }
    refusals.stored()
  }

  const source = createJetStreamScanSource(nc, { durable, singleWriter: false, maxBatch: maxInFlight, ackWaitMs: Math.max(3_000, timeoutMs * 2), retryMs, reportLag, pace })
  return {
    async start() {
      const jsm = await nc.jetstreamManager()
      await ensureScanStream(jsm)
      await warnOfLegacyConsumer(jsm)
      await source.start(relay)
    },
    async stop() {
      ingestBehind = false
      resume()
      await source.stop()
      replies.unsubscribe()
      own?.close()
    },
    giveWay(behind) {
      ingestBehind = behind
      if (!behind) resume()
    },
  }
}
