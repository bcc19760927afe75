import type { NatsConnection } from 'nats'
import { jetstreamRefusals, jetstreamStoreFull } from './metrics'
import { log } from './log'

/**
 * Why JetStream refused a write for want of room (README "Scan events", "Retention and the
 * broker's disk"): the stream's own bound reached with discard=new (`max_bytes`, `max_msgs`,
 * `max_msgs_per_subject`), or the server's (`insufficient_resources`: its JetStream store is
 * full) or the account's (`limits`). The writes wait and go on being refused until messages age
 * out or the store grows: the process keeps serving, but nothing it publishes arrives.
 */
export type StoreFullReason = 'max_bytes' | 'max_msgs' | 'max_msgs_per_subject' | 'insufficient_resources' | 'limits'

/**
 * The reason of a refusal for want of room, read from the error nats.js gives (its `api_error`,
 * `{code: 503, err_code: 10077, description: "maximum bytes exceeded"}`), or from the error of
 * an error PubAck the caller decoded itself; undefined for any other failure (a timeout, no
 * responders, a wrong last sequence).
 */
export function storeFullReason(error: unknown): StoreFullReason | undefined {
  const api = (error as { api_error?: { description?: unknown } } | null)?.api_error ?? error
  const description = String((api as { description?: unknown } | null)?.description ?? '').toLowerCase()
  if (description.includes('maximum bytes')) return 'max_bytes'
  if (description.includes('maximum messages per subject')) return 'max_msgs_per_subject'
  if (description.includes('maximum messages')) return 'max_msgs'
  if (description.includes('insufficient resources')) return 'insufficient_resources'
  if (description.includes('resource limits exceeded')) return 'limits'
  return undefined
}

/** A refusal spell is logged at its start, then at most once per this with the count since. */
export const REFUSAL_LOG_EVERY_MS = 10_000

export interface RefusalWatch {
  /** After a failed write: counts and logs it when it was a refusal for want of room (then true). */
  failed(error: unknown): boolean
  /** After a write JetStream took: ends a refusal spell (one `info` line). */
  stored(): void
  /** The reason of the spell under way; undefined while writes are taken. */
  refusing(): StoreFullReason | undefined
}

/** Every watch of this process: readiness asks whether any stream refuses its writes. */
const watches = new Set<RefusalWatch>()

/** The streams this process's writes are refused on now. */
export const streamsRefusing = (): number => [...watches].filter((watch) => watch.refusing() !== undefined).length

/**
 * A process's optional `jetstream` check (/readyz lists it under `degraded` while any stream
 * refuses this process's writes, never 503): each goes on serving, and every replica of it would
 * be refused alike.
 */
export const jetstreamTakesWrites = async (): Promise<boolean> => streamsRefusing() === 0

/** How long the readiness check waits for JetStream's answer (the probe gives all its checks 2 s). */
const JETSTREAM_PROBE_MS = 1_000

/**
 * The `jetstream` check of a process that writes or reads JetStream: fails, besides a refusal
 * for want of room, while the NATS server answers but its JetStream does not (restarted without
 * -js, the account's JetStream taken away, or `$JS.API.>` denied to the user): everything the
 * process publishes waits meanwhile. Before, every /readyz stayed 200 with nothing under
 * `degraded`. A broker that does not answer at all is `nats`'s to name, not this one's.
 */
export const jetstreamCheck = (nc: NatsConnection, natsAnswers: () => Promise<boolean>) => async (): Promise<boolean> => {
  if (streamsRefusing() > 0) return false
  const [answers, reachable] = await Promise.all([nc.jetstreamManager({ timeout: JETSTREAM_PROBE_MS }).then(() => true, () => false), natsAnswers()])
  return answers || !reachable
}

/**
 * The refusals of one writer of `stream` (`what` says in the log line what waits meanwhile):
 * each refused write counted in `lr_jetstream_refusals_total{stream,reason}`,
 * `lr_jetstream_store_full{stream}` 1 from the first until a write is taken again, an `error`
 * line at the first and then at most every REFUSAL_LOG_EVERY_MS with `refused` (how many since
 * the last line), and one `info` line once JetStream takes a write again. Before, the processes
 * went on with `insufficient resources` in a warning at most, and /readyz 200.
 */
export function watchRefusals(stream: string, what: string): RefusalWatch & { close(): void } {
  let reason: StoreFullReason | undefined
  let refused = 0
  let unwritten = 0
  let writtenAt = -Infinity
  const line = () => {
    log().error({ stream, reason, refused: unwritten, refused_total: refused }, `JetStream refuses writes to ${stream}: its store is full (${reason}); ${what}`)
    writtenAt = Date.now()
    unwritten = 0
  }
  const watch = {
    failed(error: unknown) {
      const now = storeFullReason(error)
      if (now === undefined) return false
      const began = reason === undefined
      reason = now
      refused++
      unwritten++
      jetstreamRefusals.inc({ stream, reason })
      jetstreamStoreFull.set({ stream }, 1)
      if (began || Date.now() - writtenAt >= REFUSAL_LOG_EVERY_MS) line()
      return true
    },
    stored() {
      if (reason === undefined) return
      log().info({ stream, refused_total: refused }, `JetStream takes writes to ${stream} again`)
      reason = undefined
      unwritten = 0
      jetstreamStoreFull.set({ stream }, 0)
    },
    refusing: () => reason,
    close: () => void watches.delete(watch),
  }
  watches.add(watch)
  return watch
}
