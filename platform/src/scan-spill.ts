import type { ScanBatch } from '@lr/proto'
import { errorFields, log } from './log'
import type { ScanBatchSpool } from './scan-spool'

/** What a spill put on disk and what it could not (the spool's bound, or a failed write: a full disk). */
export interface Spilled {
  spooled: number
  dropped: number
  error?: unknown
}

/**
 * Appends batches to a spool; with `close`, also writes its file out and closes it. What it took
 * is read off the spool's own count, before and after: a failed write (the spool's disk full)
 * loses what it had not written yet, earlier appends' included, and `dropped` counts those too.
 * After a failed write nothing more is tried: the disk refuses.
 */
export function spill(spool: ScanBatchSpool, batches: readonly ScanBatch[], opts: { close: boolean }): Spilled {
  const offered = batches.reduce((sum, batch) => sum + batch.count, 0)
  const before = spool.size()
  let error: unknown
  try {
    for (const batch of batches) spool.append(batch) // a refused one (the bound) is in no count
    if (opts.close) spool.close()
  } catch (failed) {
    error = failed
  }
  const kept = spool.size() - before
  return { spooled: Math.max(0, kept), dropped: offered - kept, error }
}

/**
 * A source's stop: the scans it still holds, not applied within the stop's bound, go to its spool,
 * which the next start applies (the consumers drop a scan they applied already by its id, so a
 * batch whose apply was still under way may be written too). One line says how many; one `error`
 * line how many were lost, when the spool could not take them or there is none. No metric counts
 * them: the process is exiting, and nothing would read it.
 */
export function spillAtStop(spool: ScanBatchSpool | undefined, held: readonly ScanBatch[], source: string): void {
  const scans = held.reduce((sum, batch) => sum + batch.count, 0)
  if (!spool) {
    if (scans > 0) log().error({ source, dropped: scans }, 'scans dropped at stop: not applied, and no spool on disk to hold them')
    return
  }
  const { spooled, dropped, error } = spill(spool, held, { close: true })
  if (spooled > 0) log().warn({ source, spooled, spool_scans: spool.size() }, 'scans not applied by the stop: written to the spool on disk, the next start applies them')
  if (dropped > 0) log().error({ source, dropped, spooled, spool_bytes: spool.bytes(), ...(error ? errorFields(error) : {}) }, 'scans dropped at stop: the spool on disk could not take them')
}
