import type { ScanEvent } from '@lr/proto'
import { errorFields, log } from './log'
import { dropReport } from './log-throttle'
import { reportMetrics, scansLost } from './metrics'
import { spoolProbes } from './spool-probe'
import type { ScanSpool } from './scan-spool'

/** The `error` line of a failed spool; the first failure's at once, then one per LOST_REPORT_MS at most. */
export const SPOOL_FAILED = 'the scan spool on disk failed: the scans of its failed write are lost; scans wait in memory until it takes writes again'

export interface GuardedSpoolOptions {
  /** Pause between probes of a spool whose write failed. Default 1000 ms. */
  probeMs?: number
  /** Lines about scans lost after the first come at most this often, with how many. Default 10 000 ms. */
  reportMs?: number
}

/** A resolver's spool whose calls never throw (scanSpoolGuard). */
export interface GuardedSpool extends ScanSpool {
  /** False from a failed call until a probe's write succeeds: scans that would go to the spool wait in memory meanwhile. */
  writable(): boolean
  /** Scans lost to failed calls since it was made. */
  lost(): number
  /** Ends its probes and writes the line of losses not yet reported. */
  stop(): void
}

/**
 * The resolver's spool, made safe for the publisher: a spool call that throws (its disk full, a
 * directory it may not write or that is gone) had been thrown into the publisher, whose turn's
 * flush ran in a setImmediate and ended the resolver (an uncaught ENOSPC, exit 1; `start:nats`
 * then stopped every process), or into its connection-status loop, which then stopped following
 * reconnects. Here each failure costs only the scans the failed call lost (the spool's own count,
 * before and after: what a failed write did not write), counted in lr_scans_lost_total and in
 * `error` lines (SPOOL_FAILED: the first at once, then one per `reportMs` with the count since).
 * From then on `writable()` is false, so the publisher holds scans in memory as it does without a
 * spool (up to its buffer, then dropping and counting the oldest), and `/readyz` of the resolver
 * is 503, until a probe (every `probeMs`, a write of its own to the spool's directory) succeeds.
 */
export function scanSpoolGuard(spool: ScanSpool, opts: GuardedSpoolOptions = {}): GuardedSpool {
  const { probeMs = 1000, reportMs = 10_000 } = opts
  reportMetrics(scansLost)
  let failing = false
  let lostTotal = 0
  let lastError: unknown
  const line = (lost: number) => log().error({ lost, lost_total: lostTotal, spool_bytes: spool.bytes(), ...errorFields(lastError) }, SPOOL_FAILED)
  const report = dropReport(line, reportMs)
  const probes = spoolProbes(spool, probeMs, () => {
    failing = false
    log().info({ lost_total: lostTotal }, 'the scan spool on disk takes writes again')
  })

  function failed(lost: number, error: unknown): void {
    lostTotal += lost
    lastError = error
    scansLost.inc(lost)
    if (!failing) {
      failing = true
      probes.start()
      // A failure that took no scan (a file that could not be closed) is in no count's line.
      if (lost === 0) line(0)
    }
    report.add(lost)
  }

  /** Runs a spool call; a throw becomes the scans it lost (offered, and off the spool's count). */
  function guarded<T>(offered: number, call: () => T, otherwise: T): T {
    const before = spool.size()
    try {
      return call()
    } catch (error) {
      failed(before + offered - spool.size(), error)
      return otherwise
    }
  }

  return {
    // True when taken, or lost and counted here; false only at the spool's bound (the caller drops it).
    append: (event: ScanEvent) => guarded(1, () => spool.append(event), true),
    flush: () => guarded(0, () => spool.flush(), undefined),
    close: () => guarded(0, () => spool.close(), undefined),
    /**
     * The oldest segment's scans. Its file is read only after the current one is written out
     * (a failure there is a write's), so a file that cannot be read is dropped, its scans lost:
     * left, it would be read again at every turn, and hold up every scan behind it.
     */
    take() {
      this.flush()
      const before = spool.size()
      let scans: ScanEvent[] = []
      let unread: unknown
      try {
        scans = spool.peek()
      } catch (error) {
        unread = error
      }
      try {
        spool.dropOldest()
      } catch {
        // Off the count already; a later start adopts and sends it again (deduplicated by scan_id).
      }
      if (unread !== undefined) failed(before - spool.size(), unread)
      return scans
    },
    // The spool's own functions (none uses `this`): the publisher asks `size` of every scan.
    peek: spool.peek,
    dropOldest: spool.dropOldest,
    size: spool.size,
    bytes: spool.bytes,
    probe: spool.probe,
    writable: () => !failing,
    lost: () => lostTotal,
    stop() {
      probes.stop()
      report.flush()
    },
  }
}
