import { errorFields, log } from './log'
import { type ApplyScans, type ApplyScanTexts, type Bus, SCAN_BATCH_EVENT, type ScanBatch, type ScanSource, scansOfTexts, type WantedScans } from '@lr/proto'

export interface BusScanSourceOptions {
  /** Scans applied in one call at most (a single batch with more is applied whole). Default 1000. */
  maxBatch?: number
  /** Scans held while the store is failing; the oldest batches are dropped beyond it. Default 100 000. */
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

/** A ScanBatch as the bus delivered it; anything else is one malformed scan, which validation drops. */
function batchOf(event: unknown): ScanBatch {
  const batch = event as Partial<ScanBatch> | null
  const valid = typeof batch?.events === 'string' && typeof batch.codes === 'string' && Number.isInteger(batch.count) && batch.count! >= 0
  return valid ? (batch as ScanBatch) : { events: '[null]', codes: '', count: 1 }
}

/** The distinct codes of some batches. */
function codesOf(batches: readonly ScanBatch[]): string[] {
  const codes = new Set<string>()
  for (const batch of batches) for (const code of batch.codes.split(' ')) if (code !== '') codes.add(code)
  return [...codes]
}

/**
 * One-process mode: subscribes to the scan batches of the bus (SCAN_BATCH_EVENT, in a queue
 * group) and applies what arrived, up to `maxBatch` scans in one call, one call at a time. With
 * `applyTexts` the batches' text goes on unread (to the ingestion Worker, which parses it); with
 * `wanted`, batches whose codes no one wants are passed by unread. Nothing is durable here: the
 * in-process bus itself lives only as long as the process.
 */
export function createBusScanSource(bus: Bus, opts: BusScanSourceOptions = {}): ScanSource {
  const { maxBatch = 1000, maxBuffer = 100_000, retryMs = 500, queue: group = 'analytics', lingerMs = 5 } = opts
  const queue: ScanBatch[] = []
  /** Scans in `queue`. */
  let queued = 0
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

  type Consumers = { apply: ApplyScans; wanted?: WantedScans; applyTexts?: ApplyScanTexts }

  function kick(consumers: Consumers): void {
    if (draining) return
    draining = drain(consumers).finally(() => {
      draining = undefined
      // Events that arrived after the loop saw an empty queue.
      if (queue.length > 0 && unsubscribe) kick(consumers)
    })
  }

  /** The first batches of the queue, up to maxBatch scans (at least one batch). */
  function take(): { batches: ScanBatch[]; count: number } {
    const batches: ScanBatch[] = []
    let count = 0
    while (queue.length > 0 && (batches.length === 0 || count + queue[0]!.count <= maxBatch)) {
      const batch = queue.shift()!
      batches.push(batch)
      count += batch.count
    }
    queued -= count
    return { batches, count }
  }

  async function applyTaken({ apply, wanted, applyTexts }: Consumers, batches: readonly ScanBatch[], count: number): Promise<void> {
    if (wanted && !(await wanted(codesOf(batches)).catch(() => true))) return
    if (applyTexts) return applyTexts(batches.map((batch) => batch.events), count)
    return apply(scansOfTexts(batches.map((batch) => batch.events)))
  }

  async function drain(consumers: Consumers): Promise<void> {
    while (queue.length > 0) {
      // Let the scans that arrive meanwhile in first: one transaction per batch, not per scan.
      if (lingerMs > 0 && queued < maxBatch / 2 && unsubscribe) await linger()
      else await new Promise((resolve) => setImmediate(resolve))
      const { batches, count } = take()
      try {
        await applyTaken(consumers, batches, count)
      } catch (error) {
        log().error({ scans: count, ...errorFields(error) }, 'scans not applied, retrying')
        queue.unshift(...batches)
        queued += count
        await Bun.sleep(retryMs)
        if (!unsubscribe) return
      }
    }
  }

  return {
    async start(apply, wanted, applyTexts) {
      const consumers: Consumers = { apply, wanted, applyTexts }
      unsubscribe = bus.subscribe(SCAN_BATCH_EVENT, (event) => {
        const batch = batchOf(event)
        queue.push(batch)
        queued += batch.count
        // Beyond maxBuffer the oldest batches go (the newest always stays).
        while (queued > maxBuffer && queue.length > 1) {
          const oldest = queue.shift()!
          queued -= oldest.count
          dropped += oldest.count
          log().error({ dropped: oldest.count, dropped_total: dropped, max_buffer: maxBuffer }, 'scans dropped: too many waiting to be applied')
        }
        if (wake && queued >= maxBatch / 2) wake()
        kick(consumers)
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
