/**
 * The probes of a spool whose write failed: from `start`, every `probeMs` a write of the spool's
 * own (Spool.probe), until one succeeds; then `back` once. The resolver's scan spool
 * (scan-spool-guard.ts) and the record events' (record-event-hold.ts) hold what they would have
 * written in memory meanwhile, and `back` lets them write to the spool again.
 */
export function spoolProbes(spool: { probe(): void }, probeMs: number, back: () => void) {
  let probing: Timer | undefined
  const stop = () => {
    clearInterval(probing)
    probing = undefined
  }
  function probe(): void {
    try {
      spool.probe()
    } catch {
      return // still failing: the next probe tries again
    }
    stop()
    back()
  }
  return {
    /** Probes from now on, unless already probing. */
    start(): void {
      if (probing) return
      probing = setInterval(probe, probeMs)
      probing.unref?.()
    },
    stop,
  }
}
