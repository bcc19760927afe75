import { AckPolicy, type Consumer, type ConsumerConfig, DeliverPolicy, type JetStreamManager, type JsMsg, type NatsConnection, nanos } from 'nats'
import { ensureScanBatchStream, SCAN_BATCH_STREAM, scansOfBatch } from './scan-stream-config'
import type { ApplyScans, ScanSource } from '@lr/proto'
import { errorFields, log } from './log'
import { atMostEvery } from './log-throttle'
import { consumerAckPending, consumerPending } from './metrics'
import { acquireIngestLease, type IngestLease } from './ingest-lease'
import { isMissingConsumer } from './jetstream-faults'

export interface JetStreamSourceOptions {
  /** Name of the durable consumer; replicas sharing it share the work. Default `analytics`. */
  durable?: string
  /** Scans applied in one call at most (a single message with more is applied whole). Default 1000. */
  maxBatch?: number
  /** Messages (batches of scans) asked for in one pull. Default 100. */
  maxFetch?: number
  /** Unacknowledged messages the server lets this consumer have out. Default 2 000. */
  maxAckPending?: number
  /**
   * A delivered message not acknowledged in this time is delivered again: after a crash, what
   * the dead replica held is counted this long after. Default 3 s; messages held longer (a slow
   * store) are kept alive with in-progress acks every ackWaitMs / 2.
   */
  ackWaitMs?: number
  /** How often the consumer's lag is read into lr_jetstream_consumer_pending. Default 5 s. */
  lagEveryMs?: number
  /** How long a dead replica's ingest lease outlives it (ingest-lease.ts). Default 2.5 s. */
  leaseTtlMs?: number
  /**
   * Pull only while holding the ingest lease (one writer at a time). Default true; the relay
   * (scan-relay.ts), whose writes are idempotent by themselves, pulls on every replica.
   */
  singleWriter?: boolean
  /** Redelivery delay of a batch the store refused, and pause after a failed pull. Default 1000 ms. */
  retryMs?: number
  /** Lifetime of one pull request: bounds how long `stop` waits. Default 1000 ms (the server's minimum). */
  pullExpiresMs?: number
  /**
   * Where the consumer's lag goes every lagEveryMs. Default: this thread's gauges
   * lr_jetstream_consumer_pending / _ack_pending; a source in a Worker hands it to the thread
   * that serves /metrics (scan-relay-in-worker.ts).
   */
  reportLag?: (lag: ConsumerLag) => void
  /**
   * Told when this consumer falls behind (`true`: half a pull's room of batches waits, or the
   * oldest has waited in this process more than BEHIND_MS) and when it has applied all it was
   * given or its store refuses scans (`false`: waiting then is no work for the CPU).
   * Analytics hands it to its relay (ScanRelay.giveWay).
   */
  onBacklog?: (behind: boolean) => void
  /**
   * Awaited before every pull and every call of `apply`: how the relay gives way to ingestion
   * (ScanRelay.giveWay). Default: none.
   */
  pace?: () => Promise<void> | undefined
}

/** A durable consumer's lag: messages not yet delivered, and delivered but not acknowledged. */
export interface ConsumerLag {
  stream: string
  consumer: string
  pending: number
  ackPending: number
}

/** Sets a consumer's lag on this thread's gauges. */
export function recordLag({ stream, consumer, pending, ackPending }: ConsumerLag): void {
  consumerPending.set({ stream, consumer }, pending)
  consumerAckPending.set({ stream, consumer }, ackPending)
}

/**
 * How long the oldest unapplied batch may wait in this process before the consumer counts as
 * behind (onBacklog). Measured on this process's monotonic clock from the batch's arrival, never
 * against its stream timestamp: that is the NATS server's clock, and a process whose clock ran
 * 100 ms ahead of it would count as behind for good (its relay then held to a round a second).
 */
const BEHIND_MS = 100

const consumerConfig = (durable: string, maxAckPending: number, ackWaitMs: number): Partial<ConsumerConfig> => ({
  durable_name: durable,
  ack_policy: AckPolicy.Explicit,
  deliver_policy: DeliverPolicy.All,
  max_ack_pending: maxAckPending,
  ack_wait: nanos(ackWaitMs),
})

/** Creates the durable pull consumer, or aligns an existing one with these settings. */
async function ensureConsumer(jsm: JetStreamManager, config: Partial<ConsumerConfig> & { durable_name: string }): Promise<void> {
  try {
    await jsm.consumers.add(SCAN_BATCH_STREAM, config)
  } catch (error) {
    const { durable_name, ...settings } = config
    await jsm.consumers.update(SCAN_BATCH_STREAM, durable_name, settings).catch(() => {
      throw error
    })
  }
}


/**
 * Consumes the SCAN_BATCHES stream with a durable pull consumer (explicit acks); each message is
 * a batch of scans (scan-stream-publisher.ts). Messages arriving while scans are applied queue up
 * and form the next call of `apply` (up to `maxBatch` scans); its messages are acknowledged only after
 * `apply` resolved (the store committed), and redelivered after `retryMs` when it rejected.
 * A scan delivered again after a crash is the consumer's to drop (idempotent on scan_id).
 * Only the replica holding the ingest lease pulls (ingest-lease.ts): one writer at a time
 * (unless `singleWriter` is false).
 *
 * Pulls are short fetches rather than `consume()`: `stop` lets the last pull run out and
 * naks what it still brings, so no message is left delivered to a closed subscription (which
 * the server would only hand out again after ack_wait).
 */
export function createJetStreamScanSource(nc: NatsConnection, opts: JetStreamSourceOptions = {}): ScanSource {
  const { durable = 'analytics', maxBatch = 1000, maxFetch = 100, maxAckPending = 2_000, ackWaitMs = 3_000, retryMs = 1000, pullExpiresMs = 1000, lagEveryMs = 5_000, leaseTtlMs = 2_500, singleWriter = true, reportLag = recordLag, onBacklog, pace } = opts
  let lease: IngestLease | undefined
  const mayPull = () => !singleWriter || lease?.held() === true
  let applying: JsMsg[] = []
  let heartbeat: Timer | undefined
  let lag: Timer | undefined
  const waiting: JsMsg[] = []
  /** When each waiting batch arrived (performance.now()), in step with `waiting`. */
  const arrived: number[] = []
  const dropWaiting = (): JsMsg[] => ((arrived.length = 0), waiting.splice(0))
  let pulling: Promise<void> | undefined
  let draining: Promise<void> | undefined
  let stopping = false
  let behind = false
  let failing = false
  // A store away refuses every batch waiting, one after another: its line once per 10 s
  // (log-throttle.ts), and one when a batch is applied again, with how many were refused.
  const refusedApply = atMostEvery(10_000)
  // A broker without JetStream (restarted without it) fails every pull, each retry: likewise.
  const failedPull = atMostEvery(10_000)
  let refusedInARow = 0
  const noteBacklog = (now: boolean) => {
    if (now === behind) return
    behind = now
    onBacklog?.(now)
  }
  // A pull's worth of messages waiting is enough: the next pull waits for room, so a slow apply
  // (or a relay giving way) leaves the rest in the stream rather than in this process's memory.
  let room: (() => void) | undefined
  const roomToPull = () => (waiting.length < maxFetch ? undefined : new Promise<void>((resolve) => (room = resolve)))
  const makeRoom = () => {
    if (room && (waiting.length < maxFetch || stopping)) room = void room()
  }

  async function drain(apply: ApplyScans): Promise<void> {
    while (waiting.length > 0 && !stopping) {
      // Let the messages that arrived meanwhile in first: one transaction per batch, not per scan.
      await (pace?.() ?? new Promise((resolve) => setImmediate(resolve)))
      if (stopping) return
      // Asked right before the batch is applied, after every wait: a replica paused past the
      // lease (ingest-lease.ts) wakes up here with batches the consumer has since handed to the
      // new holder, and applying them too would count their scans twice.
      if (!mayPull()) {
        // Another replica applies scans now: what this one took goes back to the stream at once.
        for (const msg of dropWaiting()) msg.nak()
        makeRoom()
        return
      }
      // A store that refuses scans is not a busy one: the relay need not wait for it.
      // A backlog fills the room a pull waits for; a slow store makes the oldest batch wait.
      if (onBacklog && waiting.length > 0) noteBacklog(!failing && (waiting.length * 2 >= maxFetch || performance.now() - arrived[0]! > BEHIND_MS))
      const batch: JsMsg[] = []
      const events: unknown[] = []
      while (waiting.length > 0 && events.length < maxBatch) {
        const msg = waiting.shift()!
        arrived.shift()
        batch.push(msg)
        for (const event of scansOfBatch(msg)) events.push(event)
      }
      makeRoom()
      applying = batch
      try {
        await apply(events, mayPull)
        if (refusedInARow > 0) log().info({ source: durable, refused: refusedInARow }, 'scans applied again')
        refusedInARow = 0
        failing = false
      } catch (error) {
        // The lease lapsed during the apply (the store stopped writing for it): not the store's failure.
        if (!mayPull()) {
          for (const msg of batch) msg.nak()
          continue
        }
        refusedInARow++
        refusedApply((repeated) => log().error({ source: durable, scans: events.length, ...(repeated > 0 ? { repeated } : {}), ...errorFields(error) }, 'scans not applied, redelivering'))
        for (const msg of batch) msg.nak(retryMs)
        failing = true
        noteBacklog(false)
        continue
      } finally {
        applying = []
      }
      for (const msg of batch) msg.ack()
    }
  }

  function kick(apply: ApplyScans): void {
    if (draining) return
    draining = drain(apply).finally(() => {
      draining = undefined
      if (waiting.length === 0) noteBacklog(false)
      if (waiting.length > 0 && !stopping) kick(apply)
    })
  }

  /** The stream and this durable consumer, made or aligned; a handle to the consumer. */
  async function attach(): Promise<Consumer> {
    const jsm = await nc.jetstreamManager()
    await ensureScanBatchStream(jsm)
    await ensureConsumer(jsm, { ...consumerConfig(durable, maxAckPending, ackWaitMs), durable_name: durable })
    return nc.jetstream().consumers.get(SCAN_BATCH_STREAM, durable)
  }

  async function pull(consumer: Consumer, apply: ApplyScans): Promise<void> {
    // A closed connection never comes back (reconnects keep it open): nothing left to pull.
    while (!stopping && !nc.isClosed()) {
      if (!mayPull()) {
        await Bun.sleep(100)
        continue
      }
      await roomToPull()
      await pace?.()
      if (stopping) return
      try {
        const messages = await consumer.fetch({ max_messages: maxFetch, expires: pullExpiresMs })
        for await (const msg of messages) {
          if (stopping) {
            msg.nak()
            continue
          }
          waiting.push(msg)
          arrived.push(performance.now())
          kick(apply)
        }
      } catch (error) {
        if (stopping) return
        failedPull((repeated) => log().warn({ stream: SCAN_BATCH_STREAM, repeated, ...errorFields(error) }, 'pulling scans failed, retrying'))
        await Bun.sleep(retryMs)
        // Made again with DeliverPolicy.All: a consumer deleted alone replays the stream, and
        // applying is idempotent on scan_id, so nothing is counted twice and nothing skipped.
        if (isMissingConsumer(error) && !stopping) {
          try {
            consumer = await attach()
            log().warn({ stream: SCAN_BATCH_STREAM, consumer: durable }, 'the scan consumer was missing: made it again')
          } catch {
            // JetStream not answering yet: the next pull fails the same way and tries again.
          }
        }
      }
    }
  }

  return {
    async start(apply) {
      const consumer = await attach()
      if (singleWriter) lease = await acquireIngestLease(nc, { ttlMs: leaseTtlMs })
      stopping = false
      pulling = pull(consumer, apply)
      // Held messages stay ours while they wait or are applied; a dead replica's come back after ackWaitMs.
      heartbeat = setInterval(() => {
        for (const msg of applying) msg.working()
        for (const msg of waiting) msg.working()
      }, ackWaitMs / 2)
      const readLag = () =>
        consumer.info(false).then(
          (info) => reportLag({ stream: SCAN_BATCH_STREAM, consumer: durable, pending: info.num_pending, ackPending: info.num_ack_pending }),
          () => undefined,
        )
      void readLag()
      lag = setInterval(readLag, lagEveryMs)
    },

    async stop() {
      stopping = true
      makeRoom()
      noteBacklog(false)
      clearInterval(lag)
      await pulling
      await draining
      // Delivered but not applied: back to the stream at once rather than after ack_wait.
      for (const msg of dropWaiting()) msg.nak()
      clearInterval(heartbeat)
      await lease?.release()
      if (!nc.isClosed()) await nc.flush().catch(() => undefined)
    },
  }
}
