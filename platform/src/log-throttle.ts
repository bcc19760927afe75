/**
 * Lines that a fault would otherwise repeat per request, per batch or per retry: under load that
 * had been hundreds a second, each with its stack, burying the one cause an operator needs (a
 * full spool wrote about 875 `scans dropped` lines a second; a store outage three lines a
 * request). Each helper is per instance (a store, a scan source), never per process, so two
 * sources or two tests never silence each other.
 */

/**
 * One kind of line at most once per `everyMs`: the first at once, then the next one due gets
 * `repeated`, how many were not written since the previous. For a fault that repeats the same
 * line (a store unreachable, an apply refused), where the line itself says enough.
 */
export function atMostEvery(everyMs: number): (write: (repeated: number) => void) => void {
  let writtenAt = -Infinity
  let repeated = 0
  return (write) => {
    const now = Date.now() // a wall-clock step at worst writes one line early or late
    if (now - writtenAt < everyMs) return void repeated++
    write(repeated)
    writtenAt = now
    repeated = 0
  }
}

/**
 * Counts what is dropped and writes it in one line per `everyMs` (the first drop of a quiet
 * spell at once), so every dropped item is in some line's count, and the sum of the lines'
 * counts is the total: `flush` writes what is still unwritten (at a stop).
 */
export function dropReport(write: (dropped: number) => void, everyMs: number): { add(count: number): void; flush(): void } {
  let unwritten = 0
  let timer: Timer | undefined
  const writeUnwritten = () => {
    if (unwritten === 0) return false
    const count = unwritten
    unwritten = 0
    write(count)
    return true
  }
  // A line due: written, and the next one not before everyMs; nothing due ends the spell.
  const due = () => {
    timer = writeUnwritten() ? setTimeout(due, everyMs) : undefined
    timer?.unref()
  }
  return {
    add(count) {
      unwritten += count
      if (!timer) due()
    },
    flush() {
      clearTimeout(timer)
      timer = undefined
      writeUnwritten()
    },
  }
}
