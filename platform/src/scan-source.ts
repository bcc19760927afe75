import { errorFields, log } from './log'
import { atMostEvery, dropReport } from './log-throttle'
import type { ScanBatchSpool } from './scan-spool'
import { spill, spillAtStop } from './scan-spill'
import { within } from './within'
import { type ApplyScans, type ApplyScanTexts, type Bus, SCAN_BATCH_EVENT, type ScanBatch, type ScanSource, scansOfTexts, type WantedScans } from '@lr/proto'

/** Scans a bus scan source holds at most (maxBuffer's default). */
export const SCAN_BUFFER = 100_000

/**
 * How long a stop goes on applying what the source holds (stopMs's default); the rest goes to the
 * spool. `bun start` stops its two sources together, so both fit in this, and the stop stays well
 * inside SHUTDOWN_DEADLINE_MS (25 s) beside the webhook deliveries in flight (up to 10 s).
 */
export const SCAN_STOP_MS = 5_000

export interface BusScanSourceOptions {
  /** Scans applied in one call at most (a single batch with more is applied whole). Default 1000. */
  maxBatch?: number
  /**
   * Scans applied in one call at most while more than `maxBatch * 4` wait: the source is behind,
   * and fewer, larger calls catch up. On a main thread kept busy by other work (a scan webhook's
   * deliveries), each call waits its turns, and at `maxBatch` a call the buffer overflowed and
   * scans were dropped (bench/ANALYSIS.md, twenty-ninth session). Default `maxBatch * 20`.
   */
  maxCatchUp?: number
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
  /**
   * Where batches wait that do not fit `maxBuffer`, on disk (openScanBatchSpool), instead of
   * being dropped; read back as the buffer empties. Only past the spool's own bound are scans
   * dropped. Without one, the oldest batches in memory are dropped beyond `maxBuffer`.
   */
  spool?: ScanBatchSpool
  /**
   * How long `stop` waits for what is held to be applied (SCAN_STOP_MS by default). What is not
   * applied by then, or whose apply failed meanwhile, goes to `spool` for the next start: a stop
   * while the store refuses (its disk full, locked) lost every scan held in memory.
   */
  stopMs?: number
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
 * `wanted`, batches whose codes no one wants are passed by unread. Scans in memory are not
 * durable across a crash (the in-process bus lives only as long as the process); with a spool,
 * those beyond the buffer are, and so is what a graceful stop could not apply (stopMs).
 */
export function createBusScanSource(bus: Bus, opts: BusScanSourceOptions = {}): ScanSource {
  const { maxBatch = 1000, maxBuffer = SCAN_BUFFER, retryMs = 500, queue: group = 'analytics', lingerMs = 5, stopMs = SCAN_STOP_MS } = opts
  const maxCatchUp = Math.max(maxBatch, opts.maxCatchUp ?? maxBatch * 20)
  const { spool } = opts
  /** Whether batches are going to the spool now (logged when it starts and when it ends). */
  let spilling = false
  const queue: ScanBatch[] = []
  /** Scans in `queue`. */
  let queued = 0
  let unsubscribe: (() => void) | undefined
  let draining: Promise<void> | undefined
  /** The batches of the apply under way: held until it succeeds. */
  let applying: ScanBatch[] = []
  /** Set once the stop has taken what is held: the drain touches the queue no more. */
  let abandoned = false
  let stopping: Promise<void> | undefined
  let dropped = 0
  /** The cause of the spool's last refused write, for the next line of dropped scans. */
  let spoolRefused: unknown
  // Dropped scans are counted into one line per 5 s (log-throttle.ts), not a line per batch: a
  // full spool had written about 875 a second. The stop writes what is left to count.
  const drops = dropReport((count) => spool
    ? log().error({ source: group, dropped: count, dropped_total: dropped, spool_bytes: spool.bytes(), ...(spoolRefused ? errorFields(spoolRefused) : {}) }, 'scans dropped: the buffer and the spool on disk are full')
    : log().error({ source: group, dropped: count, dropped_total: dropped, max_buffer: maxBuffer }, 'scans dropped: too many waiting to be applied'), 5000)
  // A refused apply is retried every retryMs: its line once per 10 s while it goes on.
  const refusedApply = atMostEvery(10_000)
  /** Applies refused in a row: when one succeeds again, a line says how many. */
  let refusedInARow = 0
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
      if ((queue.length > 0 || (spool?.size() ?? 0) > 0) && unsubscribe) kick(consumers)
    })
  }

  /** The first batches of the queue, up to maxBatch scans, maxCatchUp when behind (at least one batch). */
  function take(): { batches: ScanBatch[]; count: number } {
    const batches: ScanBatch[] = []
    const most = queued > maxBatch * 4 ? maxCatchUp : maxBatch
    let count = 0
    while (queue.length > 0 && (batches.length === 0 || count + queue[0]!.count <= most)) {
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

  /** Batches back from the spool while the buffer has room (never while stopping: they stay on disk). */
  function refill(): void {
    while (spool && spool.size() > 0 && queued < maxBuffer / 2 && unsubscribe) {
      const batches = spool.take()
      if (batches.length === 0) break // nothing readable left: never spin
      for (const batch of batches) {
        queue.push(batch)
        queued += batch.count
      }
    }
    if (spilling && spool?.size() === 0) {
      spilling = false
      log().info({ source: group }, 'scans held on disk are all back in memory')
    }
  }

  /** A batch that does not fit the buffer: to the spool, or dropped (the oldest in memory, without a spool). */
  function overflow(batch: ScanBatch): void {
    if (spool) {
      const spilled = spill(spool, [batch], { close: false })
      if (spilled.spooled > 0 && !spilling) {
        log().warn({ source: group, max_buffer: maxBuffer, spooled: spool.size() }, 'scans waiting beyond the buffer: held on disk until they are applied')
        spilling = true
      }
      if (spilled.dropped > 0) {
        dropped += spilled.dropped
        spoolRefused = spilled.error
        drops.add(spilled.dropped)
      }
      return
    }
    queue.push(batch)
    queued += batch.count
    // Beyond maxBuffer the oldest batches go (the newest always stays).
    while (queued > maxBuffer && queue.length > 1) {
      const oldest = queue.shift()!
      queued -= oldest.count
      dropped += oldest.count
      drops.add(oldest.count)
    }
  }

  async function drain(consumers: Consumers): Promise<void> {
    refill()
    while (queue.length > 0) {
      // Let the scans that arrive meanwhile in first: one transaction per batch, not per scan.
      if (lingerMs > 0 && queued < maxBatch / 2 && unsubscribe) await linger()
      else await new Promise((resolve) => setImmediate(resolve))
      if (abandoned) return
      const { batches, count } = take()
      applying = batches
      try {
        await applyTaken(consumers, batches, count)
        if (refusedInARow > 0) log().info({ source: group, refused: refusedInARow }, 'scans applied again')
        refusedInARow = 0
      } catch (error) {
        if (abandoned) return // the stop has spooled these already
        queue.unshift(...batches)
        queued += count
        // Stopping: the stop spools what is held now instead of waiting for a store that refuses.
        if (!unsubscribe) return void log().error({ scans: count, ...errorFields(error) }, 'scans not applied')
        refusedInARow++
        refusedApply((repeated) => log().error({ source: group, scans: count, ...(repeated > 0 ? { repeated } : {}), ...errorFields(error) }, 'scans not applied, retrying'))
        await Bun.sleep(retryMs)
        if (!unsubscribe) return
      } finally {
        applying = []
      }
      refill()
    }
  }

  /** Applies what is held for up to stopMs; what is left (the apply under way too) goes to the spool. */
  async function stopOnce(): Promise<void> {
    unsubscribe?.()
    unsubscribe = undefined
    wake?.()
    if (draining) await within(stopMs, draining)
    abandoned = true
    const held = [...applying, ...queue.splice(0)]
    queued = 0
    drops.flush()
    spillAtStop(spool, held, group)
  }

  return {
    async start(apply, wanted, applyTexts) {
      const consumers: Consumers = { apply, wanted, applyTexts }
      unsubscribe = bus.subscribe(SCAN_BATCH_EVENT, (event) => {
        const batch = batchOf(event)
        // While the spool holds any, new batches join it: the buffer refills from its oldest.
        if (queued + batch.count > maxBuffer || (spool && spool.size() > 0)) overflow(batch)
        else {
          queue.push(batch)
          queued += batch.count
        }
        if (wake && queued >= maxBatch / 2) wake()
        kick(consumers)
      }, { queue: group })
      // Batches an earlier process left on disk (a crash, a restart while behind).
      if (spool && spool.size() > 0) {
        log().info({ source: group, spooled: spool.size() }, 'scans held on disk by an earlier process: applying them')
        spilling = true
        kick(consumers)
      }
    },
    // Once: the one-process mode stops its two sources together, then each service stops its own.
    stop() {
      return (stopping ??= stopOnce())
    },
  }
}
