import type { RecordEventType } from '@lr/proto'
import { errorFields, log } from './log'
import { atMostEvery, dropReport } from './log-throttle'
import { recordEventsLost } from './metrics'
import type { Spool } from './scan-spool'
import { spoolProbes } from './spool-probe'

/** A batch of record events of one type as published: each event's id and JSON text. */
export interface HeldEvents {
  type: RecordEventType
  events: { id: string; json: string }[]
}

/** Batches held in memory at most (no spool, or one refusing writes): beyond, the oldest is lost. */
export const HELD_MAX = 10_000

/** Why held events were lost: the `cause` of lr_record_events_lost_total and of the log line. */
export type LostCause = 'spool_full' | 'held_max' | 'unreadable'

/** The `error` line of lost events: the first loss at once, then one per `reportMs` with the count since. */
export const RECORD_EVENTS_LOST = 'record events of stored writes lost: the webhooks will not get them'
/** The `error` line of a spool write that failed (its disk full, a directory it may not write): at most one per `reportMs`. */
export const EVENT_SPOOL_FAILED = 'the record event spool on disk failed: held record events wait in memory until it takes writes again'
export const EVENT_SPOOL_BACK = 'the record event spool on disk takes writes again'

export interface HeldEventsOptions {
  /** Where batches wait; without it (DATA_DIR not writable), in memory only. */
  spool?: Spool<HeldEvents>
  /** Pause between attempts to publish what is held. */
  retryMs: number
  /** Pause between probes of a spool whose write failed. Default 1000 ms. */
  probeMs?: number
  /** Lines about losses and spool failures after the first come at most this often. Default 10 000 ms. */
  reportMs?: number
}

/** The spool's size counts events, not batches, so what a failed spool call lost is known in events. */
export const heldEventsWeight = (batch: HeldEvents): number => batch.events.length

/**
 * Record event batches whose publish failed, published again in order every `retryMs` until
 * JetStream takes them; on disk when a spool is given (what a stopped process left there goes at
 * start), else in memory.
 *
 * No spool call may throw out of here. Before, one did: a write refused (a full disk: ENOSPC; a
 * directory gone or not writable) rejected the sink, so each write logged its own line and its
 * events were lost without a count, and a file that could not be read back (removed by hand)
 * rejected the retry timer's drain: an unhandled rejection, which ends a records or dynamic
 * process (exit 1). Now a refused write costs no event: its batch, and every one held after it,
 * waits in memory as without a spool (up to HELD_MAX batches), with one `error` line
 * (EVENT_SPOOL_FAILED, at most one per `reportMs`), until a probe's write of its own (every
 * `probeMs`) succeeds; the memory's batches then go to the spool behind those already there, so
 * the order they were held in is kept. What is lost (past the spool's bound, past HELD_MAX, or in
 * a file that cannot be read back) is counted in lr_record_events_lost_total{cause} and in
 * RECORD_EVENTS_LOST lines with the count since the previous one. The API's answers never depend
 * on it: the write they follow is stored (README "Operations", "NATS away").
 */
export function createHeldEvents(publish: (batch: HeldEvents) => Promise<void>, opts: HeldEventsOptions) {
  const { spool, retryMs, probeMs = 1000, reportMs = 10_000 } = opts
  let memory: HeldEvents[] = []
  let timer: Timer | undefined
  let failing = false
  let spoolWritable = spool !== undefined
  let lostTotal = 0
  let lastLoss: { cause: LostCause; error?: unknown } = { cause: 'spool_full' }
  const size = () => memory.length + (spool?.size() ?? 0)
  const schedule = (ms = retryMs) => void (timer ??= setTimeout(drain, ms))
  const report = dropReport((lost) => log().error({ lost, lost_total: lostTotal, cause: lastLoss.cause, ...(lastLoss.error === undefined ? {} : errorFields(lastLoss.error)) }, RECORD_EVENTS_LOST), reportMs)
  const spoolFailedLine = atMostEvery(reportMs)

  function lose(events: number, cause: LostCause, error?: unknown): void {
    lostTotal += events
    lastLoss = { cause, error }
    recordEventsLost.inc({ cause }, events)
    report.add(events)
  }

  // Once the spool takes writes again, the batches memory holds go to it, in the order held.
  const probes = spool && spoolProbes(spool, probeMs, () => {
    spoolWritable = true
    log().info({ in_memory: memory.length }, EVENT_SPOOL_BACK)
    const waiting = memory
    memory = []
    for (const batch of waiting) keep(batch)
  })

  function spoolFailed(error: unknown): void {
    spoolFailedLine((repeated) => log().error({ repeated, spool_events: spool!.size(), ...errorFields(error) }, EVENT_SPOOL_FAILED))
    if (!spoolWritable) return
    spoolWritable = false
    probes?.start()
  }

  /**
   * Into the spool: true once it is there (or lost at the spool's bound, and counted). Each is
   * written out at once, so the write buffer never holds another batch: a failed write costs at
   * most this one, which the caller then keeps in memory (false).
   */
  function toSpool(store: Spool<HeldEvents>, batch: HeldEvents): boolean {
    const before = store.size()
    try {
      if (!store.append(batch)) lose(batch.events.length, 'spool_full')
      else store.flush()
      return true
    } catch (error) {
      spoolFailed(error)
      return store.size() > before // not written: its lines are off the spool's count
    }
  }

  /** After the batches already held: the spool while it takes writes and memory holds none (so order is kept), else memory. */
  function keep(batch: HeldEvents): void {
    if (spool && spoolWritable && memory.length === 0 && toSpool(spool, batch)) return
    memory.push(batch)
    if (memory.length > HELD_MAX) lose(memory.shift()!.events.length, 'held_max')
  }

  /** The spool's oldest file; one that cannot be read is dropped, its events lost (undefined: nothing read nor dropped, try later). */
  function readOldest(store: Spool<HeldEvents>): HeldEvents[] | undefined {
    const before = store.size()
    try {
      return store.peek()
    } catch (error) {
      dropOldest(store)
      const lost = before - store.size()
      if (lost > 0) lose(lost, 'unreadable', error)
      return lost > 0 ? [] : undefined
    }
  }

  function dropOldest(store: Spool<HeldEvents>): void {
    try {
      store.dropOldest()
    } catch {
      // Off the count already; the file stays, and a later start sends it again (each event is kept once).
    }
  }

  /**
   * Publishes the oldest held batches in order, the spool's before memory's; they leave the spool
   * (or memory) only once all of them are published, so a process killed meanwhile, or a broker
   * still away, loses none (some may go twice). Batches held meanwhile come after them.
   */
  async function drain(): Promise<void> {
    timer = undefined
    const fromSpool = spool !== undefined && spool.size() > 0
    const batches = fromSpool ? readOldest(spool) : memory.slice()
    if (!batches) return schedule()
    for (const batch of batches) {
      try {
        await publish(batch)
      } catch {
        return schedule() // still away
      }
    }
    if (fromSpool) dropOldest(spool)
    else {
      // Not by count: a batch held meanwhile past HELD_MAX shifted the oldest out, or a probe moved them to the spool.
      const published = new Set(batches)
      memory = memory.filter((batch) => !published.has(batch))
    }
    failing = size() > 0
    if (failing) return schedule(0)
    log().info({ held: 0 }, 'JetStream takes record events again: every held one is published')
  }

  if (spool && spool.size() > 0) {
    failing = true
    schedule()
  }
  return {
    hold(batch: HeldEvents, error: unknown): void {
      if (!failing) log().warn({ events: batch.events.length, type: batch.type, ...errorFields(error) }, 'could not publish record events: holding them and publishing again until JetStream takes them')
      failing = true
      keep(batch)
      schedule()
    },
    /** Events lost since it was made (lr_record_events_lost_total counts every sink's). */
    lost: () => lostTotal,
  }
}
