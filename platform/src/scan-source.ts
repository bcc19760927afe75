import { errorFields, log } from './log'
import { type ApplyScans, type Bus, SCANS_ALL, type ScanSource } from '@lr/proto'

export interface BusScanSourceOptions {
  /** Events applied in one call at most. Default 1000. */
  maxBatch?: number
  /** Events held while the store is failing; the oldest are dropped beyond it. Default 100 000. */
  maxBuffer?: number
  /** Wait before retrying a batch the store refused. Default 500 ms. */
  retryMs?: number
  /** Queue group of the subscription: replicas share the scans. Default `analytics`. */
  queue?: string
  /**
   * How long a batch of fewer than `maxBatch / 2` scans waits for more before it is applied.
   * Default 5 ms: a resolver at 50k redirects/s hands over ~70 scans per event-loop turn, and a
   * transaction's fixed cost (its commit, the aggregate upserts) then outweighed its scans; a few
   * hundred per batch cut the ingestion Worker's CPU per scan by about a third (bench/ANALYSIS.md,
   * thirteenth session). 0: only the scans that arrived within the same turn.
   */
  lingerMs?: number
}

/**
 * One-process mode: subscribes to every scanSubject on the bus (in a queue group) and applies
 * what arrived in batches, one batch at a time. Nothing is durable here: the in-process bus
 * itself lives only as long as the process.
 */
export function createBusScanSource(bus: Bus, opts: BusScanSourceOptions = {}): ScanSource {
  const { maxBatch = 1000, maxBuffer = 100_000, retryMs = 500, queue: group = 'analytics', lingerMs = 5 } = opts
  const queue: unknown[] = []
  let unsubscribe: (() => void) | undefined
  let draining: Promise<void> | undefined
  let dropped = 0
  // Ends a linger early: the batch reached half of maxBatch, or the source stops.
  let wake: (() => void) | undefined
  const linger = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => wake?.(), lingerMs)
      wake = () => {
        clearTimeout(timer)
        wake = undefined
        resolve()
      }
    })

  function kick(apply: ApplyScans): void {
    if (draining) return
    draining = drain(apply).finally(() => {
      draining = undefined
      // Events that arrived after the loop saw an empty queue.
      if (queue.length > 0 && unsubscribe) kick(apply)
    })
  }

  async function drain(apply: ApplyScans): Promise<void> {
    while (queue.length > 0) {
      // Let the scans that arrive meanwhile in first: one transaction per batch, not per scan.
      if (lingerMs > 0 && queue.length < maxBatch / 2 && unsubscribe) await linger()
      else await new Promise((resolve) => setImmediate(resolve))
      const batch = queue.splice(0, maxBatch)
      try {
        await apply(batch)
      } catch (error) {
        log().error({ scans: batch.length, ...errorFields(error) }, 'scans not applied, retrying')
        queue.unshift(...batch)
        await Bun.sleep(retryMs)
        if (!unsubscribe) return
      }
    }
  }

  return {
    async start(apply) {
      unsubscribe = bus.subscribe(SCANS_ALL, (event) => {
        queue.push(event)
        if (queue.length > maxBuffer) {
          queue.shift()
          dropped++
          log().error({ dropped: 1, dropped_total: dropped, max_buffer: maxBuffer }, 'scan dropped: too many waiting to be applied')
        }
        if (wake && queue.length >= maxBatch / 2) wake()
        kick(apply)
      }, { queue: group })
    },
    async stop() {
      unsubscribe?.()
      unsubscribe = undefined
      wake?.()
      await draining
    },
  }
}
