import { AckPolicy, ConsumerEvents, type ConsumerMessages, DeliverPolicy, type JetStreamManager, type JsMsg, type NatsConnection, nanos } from 'nats'
import { durableStream, ensureStream } from './jetstream-streams'
import { isMissingStream } from './jetstream-faults'
import { watchRefusals } from './jetstream-refusals'
import { type Config, type RecordEvent, type RecordEventSink, type RecordEventType, recordEventSubject, type WantedScans } from '@lr/proto'
import { createTurnBatcher } from './turn-batch'
import { errorFields, log } from './log'
import { atMostEvery } from './log-throttle'
import { accessSync, constants } from 'node:fs'
import { join } from 'node:path'
import { openJsonSpool } from './scan-spool'
import { createHeldEvents, type HeldEvents, type HeldEventsOptions, heldEventsWeight } from './record-event-hold'

export type { HeldEvents } from './record-event-hold'

/**
 * Record events with TRANSPORT=nats (docs/decisions.md "Webhooks"): the JetStream stream
 * RECORD_EVENTS on record-events.<type>, deduplicated by the event id (`Nats-Msg-Id`), read by
 * the webhooks worker's durable consumer. Its own entry, so importing proto never pulls `nats`.
 */
export const RECORD_EVENT_STREAM = 'RECORD_EVENTS'

/** Creates the stream (events stay 7 days for a webhooks worker that is away), or aligns the one that exists; safe from every process. */
export const ensureRecordEventStream = (jsm: JetStreamManager) => ensureStream(jsm, durableStream(RECORD_EVENT_STREAM, ['record-events.>']))

/** A record event message's largest size, below the broker's max_payload (bench/ANALYSIS.md, seventeenth session). */
export const RECORD_EVENT_BATCH_MAX_BYTES = 256 * 1024

/**
 * The sink of services/records and services/dynamic with TRANSPORT=nats: publishes the events and
 * resolves on their PubAck (stored by the stream), before the API answers. The stream is made on
 * first use, so a process starts even while JetStream is away. A batch whose publish fails is
 * held (record-event-hold.ts), in `spool` on disk when given (in memory without one or while it
 * refuses writes, up to HELD_MAX batches), and published
 * again every `retryMs` until JetStream takes it: the write it follows is stored, so its events
 * must not be lost with the broker (they were logged and dropped, and a client's retry replayed
 * the answer with no event ever sent). The webhooks worker stores a message once per event id,
 * so one published twice is delivered once.
 *
 * Events of one type handed over in the same burst (the writes of one group commit, say) go as one
 * message: a JSON array, at most `maxBatchBytes` and the broker's max_payload, its `Nats-Msg-Id` the
 * first event's id. A lone event goes as the event itself, as before. A batch is published again
 * whole after a failure, under the same id, so the stream's dedup window keeps each event once.
 * The webhooks worker reads both shapes (`recordEventsOf`). Run the webhooks worker of this
 * version before records and dynamic: an older one drops an array as malformed.
 */
export function createJetStreamRecordEvents(nc: NatsConnection, opts: { timeoutMs?: number; maxBatchBytes?: number } & Partial<HeldEventsOptions> = {}): RecordEventSink {
  const js = nc.jetstream({ timeout: opts.timeoutMs ?? 5000 })
  const maxBytes = Math.min(opts.maxBatchBytes ?? RECORD_EVENT_BATCH_MAX_BYTES, (nc.info?.max_payload ?? 1024 * 1024) - 1024)
  let ready: Promise<unknown> | undefined
  const ensure = () => (ready ??= nc.jetstreamManager().then(ensureRecordEventStream).catch((error) => {
    ready = undefined
    throw error
  }))
  // A full stream store refuses every batch, held and retried: counted, logged, on /readyz (degraded).
  const refusals = watchRefusals(RECORD_EVENT_STREAM, 'record events wait in the spool (README "NATS away")')
  const publishOnce = async ({ type, events }: HeldEvents) => {
    const body = events.length === 1 ? events[0]!.json : `[${events.map((event) => event.json).join(',')}]`
    const publish = () =>
      js.publish(recordEventSubject(type), body, { msgID: events[0]!.id }).then(
        () => refusals.stored(),
        (error: unknown) => {
          refusals.failed(error)
          throw error
        },
      )
    await ensure()
    try {
      await publish()
    } catch (error) {
      // A stream that went (a broker restarted without its store, or deleted by hand) is made
      // again, here or by the webhooks worker, and this batch follows. "No responders" says it
      // went; a plain subscriber on the subject turns that into a timeout, hence the check.
      const made = await nc.jetstreamManager().then(ensureRecordEventStream).catch(() => false)
      if (!made && !isMissingStream(error)) throw error
      await publish()
    }
  }
  const held = createHeldEvents(publishOnce, { ...opts, retryMs: opts.retryMs ?? 1000 })
  const publishBatch = (type: RecordEventType, events: { id: string; json: string }[]) =>
    publishOnce({ type, events }).catch((error) => held.hold({ type, events }, error))
  const batchers = new Map<RecordEventType, ReturnType<typeof createTurnBatcher<{ id: string; json: string }>>>()
  return (event: RecordEvent) => {
    let batcher = batchers.get(event.type)
    if (!batcher) batchers.set(event.type, (batcher = createTurnBatcher((events) => publishBatch(event.type, events), maxBytes)))
    const json = JSON.stringify(event)
    return batcher({ item: { id: event.id, json }, bytes: Buffer.byteLength(json) })
  }
}

/** Where a records or dynamic process holds the record events JetStream did not take: under DATA_DIR. */
export const recordEventSpoolDir = (dataDir: string, service: string): string => join(dataDir, 'record-event-spool', service)

/**
 * The sink of a records or dynamic process (TRANSPORT=nats): held batches wait in
 * `${DATA_DIR}/record-event-spool/<service>`, bounded by SCAN_SPOOL_MAX_MB, so they survive a
 * restart; where that cannot be written (a read-only file system), in memory, said in one line.
 */
export function processRecordEvents(nc: NatsConnection, config: Config, service: string): RecordEventSink {
  const dir = recordEventSpoolDir(config.DATA_DIR, service)
  let spool: HeldEventsOptions['spool']
  try {
    spool = openJsonSpool<HeldEvents>(dir, { maxBytes: config.SCAN_SPOOL_MAX_MB * 1024 * 1024 }, heldEventsWeight)
    // A directory that exists but is not ours to write (left by another user) opens all the
    // same; its first held batch would then fail. Found out now, it is the same one line.
    accessSync(dir, constants.W_OK)
  } catch (error) {
    spool = undefined
    log().warn({ dir, ...errorFields(error) }, 'record events held while JetStream is away stay in memory: their spool directory cannot be written')
  }
  return createJetStreamRecordEvents(nc, { spool })
}

/** What consume() reports when its consumer or stream is not there any more. */
const GONE = new Set([ConsumerEvents.ConsumerDeleted, ConsumerEvents.ConsumerNotFound, ConsumerEvents.StreamNotFound])

/** The record events of one RECORD_EVENTS message: an event, or an array of them (createJetStreamRecordEvents). */
export function recordEventsOf(msg: Pick<JsMsg, 'json'>): unknown[] {
  try {
    const payload = msg.json<unknown>()
    return Array.isArray(payload) ? payload : [payload]
  } catch {
    return [null] // malformed: apply drops it, and it is acknowledged
  }
}

export interface DurableConsumerOptions {
  stream: string
  durable: string
  /** Creates the stream when missing (a consumer may start before any publisher). */
  ensureStream(jsm: JetStreamManager): Promise<unknown>
  /** Messages the client holds ahead of the one being applied. Default 100. */
  maxAhead?: number
  /** A message not acknowledged in this time comes again (a crashed worker's). Default 10 s. */
  ackWaitMs?: number
  /** Redelivery delay of a message `apply` refused. Default 1000 ms. */
  retryMs?: number
  /** The events of one message; default recordEventsOf: one JSON event or an array of them (a malformed message is one null). */
  eventsOf?: (msg: JsMsg) => unknown[]
  /** The codes a message names before it is read (scanCodesOf), for `start`'s `wanted`. */
  codesOf?: (msg: JsMsg) => string[] | undefined
}

/**
 * A durable consumer (explicit acks), one message at a time. Made the first time with
 * DeliverPolicy.New: what the stream held before (7 days of scans) predates every endpoint, as
 * endpoints are served by the process that made the consumer; after that it keeps its place.
 * Each message is acknowledged only after `apply` resolved, so what a crashed process held comes
 * again after ackWaitMs. Replicas sharing the durable name share the work; `apply` must be
 * idempotent (redeliveries). On stop, what the client still holds goes back at once (nak).
 */
export function createDurableConsumer(nc: NatsConnection, opts: DurableConsumerOptions) {
  const { stream, durable, maxAhead = 100, ackWaitMs = 10_000, retryMs = 1000, eventsOf = recordEventsOf, codesOf } = opts
  let stopping = false
  let loop: Promise<void> | undefined
  let messages: ConsumerMessages | undefined
  let wants: WantedScans | undefined
  // A store away refuses every message, each again after retryMs: its line once per 10 s
  // (log-throttle.ts), and one when a message is applied again, with how many were refused.
  const refusedApply = atMostEvery(10_000)
  let refusedInARow = 0
  /** A message that names its codes, none of them wanted: acknowledged unread (webhooks pass most scan batches by so). */
  const unwanted = async (msg: JsMsg): Promise<boolean> => {
    const codes = wants && codesOf?.(msg)
    return codes !== undefined && (await wants!(codes).catch(() => true)) === false
  }
  return {
    async start(apply: (payloads: unknown[]) => Promise<void>, wanted?: WantedScans): Promise<void> {
      wants = wanted
      const jsm = await nc.jetstreamManager()
      await opts.ensureStream(jsm)
      const config = { durable_name: durable, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.New, ack_wait: nanos(ackWaitMs) }
      await jsm.consumers.add(stream, config).catch(() => jsm.consumers.update(stream, durable, { ack_wait: config.ack_wait }))
      // The stream's newest message now, by the NATS server's clock (which opt_start_time is read
      // by): this process's own may be off it by more than an ack wait. An empty stream: its start.
      const startedAt = Math.max(0, Date.parse((await jsm.streams.info(stream)).state.last_ts) || 0)
      /** Time (ns, the server's) of the newest message handled, where a consumer made again starts. */
      let handledUpTo: number | undefined
      // From the last message handled (or the newest at this start), less one ack wait: what another replica
      // sharing the consumer still held comes again too (apply is idempotent). Another replica
      // may make it first, from its own last message, which is as good.
      const attachAgain = async () => {
        const jsm = await nc.jetstreamManager()
        await opts.ensureStream(jsm)
        const from = new Date((handledUpTo === undefined ? startedAt : Math.floor(handledUpTo / 1e6)) - ackWaitMs).toISOString()
        await jsm.consumers.add(stream, { ...config, deliver_policy: DeliverPolicy.StartTime, opt_start_time: from }).catch(() => undefined)
      }
      stopping = false
      loop = (async () => {
        // When the consumer goes (deleted by hand, or the broker lost its store) it is made again
        // from the last message handled, so none published meanwhile is skipped.
        while (!stopping && !nc.isClosed()) {
          try {
            const consumer = await nc.jetstream().consumers.get(stream, durable)
            // Pulls of 5 s (nats.js's default is 30 s): a consumer deleted under a pull is
            // noticed when it ends, so it is made again within seconds, not half a minute.
            const iterator = await consumer.consume({ max_messages: maxAhead, expires: 5_000 })
            messages = iterator
            // consume() itself waits for a consumer that went to come back; we make it again instead.
            void (async () => {
              for await (const status of await iterator.status())
                if (GONE.has(status.type as ConsumerEvents)) return void (await iterator.close())
            })().catch(() => undefined)
            for await (const msg of iterator) {
              if (stopping) {
                msg.nak()
                continue
              }
              try {
                if (!(await unwanted(msg))) await apply(eventsOf(msg))
                msg.ack()
                handledUpTo = msg.info.timestampNanos
                if (refusedInARow > 0) log().info({ stream, consumer: durable, refused: refusedInARow }, 'events applied again')
                refusedInARow = 0
              } catch (error) {
                refusedInARow++
                refusedApply((repeated) => log().error({ stream, consumer: durable, ...(repeated > 0 ? { repeated } : {}), ...errorFields(error) }, 'event not applied, redelivering'))
                msg.nak(retryMs)
              }
            }
          } catch (error) {
            log().warn({ stream, consumer: durable, ...errorFields(error) }, 'reading the durable consumer failed')
          }
          if (stopping || nc.isClosed()) return
          log().warn({ stream, consumer: durable }, 'the durable consumer went away: making it again')
          await attachAgain().catch((error) => log().warn({ stream, consumer: durable, ...errorFields(error) }, 'the durable consumer could not be made yet'))
          await Bun.sleep(retryMs)
        }
      })()
    },
    async stop(): Promise<void> {
      stopping = true
      await messages?.close()
      await loop
    },
  }
}
