import { createScanCounts, type ScanCounts } from './limits'

/**
 * Capped codes' counts shared by every resolver thread of a process, so that the process stays
 * exact at the cap (README "Expiring and capped codes") however its threads share the scans. A
 * count is a 64-bit slot of shared memory, raised by compare-and-swap; the main thread gives each
 * capped code its slot when it answers the code's lookup, and hands every block of slots to
 * every thread before any answer that names a slot in it.
 */
export const SLOTS_PER_BLOCK = 4096

export interface CountSlotsOptions {
  /**
   * Called after every `sweepEvery` codes given a new slot: the caller asks every thread which
   * codes it holds (sweepStarted, then sweepEnded with the answers). Without it no slot is freed.
   */
  sweep?: () => void
  /** Default SLOTS_PER_BLOCK: a sweep before each new block would be needed. */
  sweepEvery?: number
}

/**
 * Main thread: the slot of each capped code; a new block of slots is announced to the threads.
 * A slot no thread holds any more (each thread lets a code's slot go when its cache drops the
 * code) is freed by a sweep and given to the next new code, zeroed: the table is bounded by what
 * the threads cache, where it had kept a slot per capped code ever looked up.
 */
export function createCountSlots(announce: (block: SharedArrayBuffer) => void, options: CountSlotsOptions = {}) {
  const { sweep, sweepEvery = SLOTS_PER_BLOCK } = options
  const slots = new Map<string, number>()
  const blocks: SharedArrayBuffer[] = []
  const views: BigInt64Array[] = []
  const free: number[] = []
  let next = 0
  let newSinceSweep = 0
  /** While a sweep waits for the threads' answers: the codes given a slot since it began, kept whatever they answer. */
  let handed: Set<string> | undefined

  function newSlot(): number {
    const reused = free.pop()
    if (reused !== undefined) {
      // No thread holds it (sweepEnded): nobody counts in it while it is zeroed.
      Atomics.store(views[Math.floor(reused / SLOTS_PER_BLOCK)]!, reused % SLOTS_PER_BLOCK, 0n)
      return reused
    }
    const slot = next++
    if (slot % SLOTS_PER_BLOCK === 0) {
      const block = new SharedArrayBuffer(SLOTS_PER_BLOCK * BigInt64Array.BYTES_PER_ELEMENT)
      blocks.push(block)
      views.push(new BigInt64Array(block))
      announce(block)
    }
    return slot
  }

  return {
    slotOf(code: string): number {
      let slot = slots.get(code)
      if (slot === undefined) {
        slot = newSlot()
        slots.set(code, slot)
        if (++newSinceSweep >= sweepEvery) {
          newSinceSweep = 0
          sweep?.()
        }
      }
      // After the sweep this call may have begun: its asks go out before this slot does.
      handed?.add(code)
      return slot
    },
    /** Every block so far (a thread that starts late gets them first). */
    blocks: (): readonly SharedArrayBuffer[] => blocks,
    /** Codes holding a slot. */
    get size(): number {
      return slots.size
    },
    /**
     * A sweep begins, before the threads are asked: a slot handed out from now on may reach a
     * thread after it answered, so its code is kept. (Each thread answers after every slot sent
     * to it before the ask: one channel, in order.)
     */
    sweepStarted(): void {
      handed = new Set()
    },
    /**
     * The codes the threads hold, all of them answering (undefined: one did not, nothing is
     * freed). Frees the slot of every other code; answers how many.
     */
    sweepEnded(held: ReadonlySet<string> | undefined): number {
      const kept = handed
      handed = undefined
      if (!held || !kept) return 0
      let freed = 0
      for (const [code, slot] of slots) {
        if (held.has(code) || kept.has(code)) continue
        slots.delete(code)
        free.push(slot)
        freed++
      }
      return freed
    },
  }
}

/** A resolver thread's counts: in the shared slots for the codes it was given one, else its own. */
export function createSharedScanCounts() {
  const blocks: BigInt64Array[] = []
  const slots = new Map<string, number>()
  // A capped code without a slot (never expected: every capped lookup carries one) counts here.
  const own = createScanCounts()
  const cell = (slot: number): [BigInt64Array, number] => [blocks[Math.floor(slot / SLOTS_PER_BLOCK)]!, slot % SLOTS_PER_BLOCK]

  const counts: ScanCounts = {
    has: (code) => slots.has(code) || own.has(code),
    seed(code, scans) {
      const slot = slots.get(code)
      if (slot === undefined) return own.seed(code, scans)
      const [array, i] = cell(slot)
      const seen = BigInt(scans)
      for (let n = Atomics.load(array, i); n < seen; n = Atomics.load(array, i)) if (Atomics.compareExchange(array, i, n, seen) === n) return
    },
    take(code, max) {
      if (max === Number.POSITIVE_INFINITY) return true
      const slot = slots.get(code)
      if (slot === undefined) return own.take(code, max)
      const [array, i] = cell(slot)
      const cap = BigInt(max)
      for (let n = Atomics.load(array, i); n < cap; n = Atomics.load(array, i)) if (Atomics.compareExchange(array, i, n, n + 1n) === n) return true
      return false
    },
    capped(code, max) {
      const slot = slots.get(code)
      if (slot === undefined) return own.capped(code, max)
      const [array, i] = cell(slot)
      return Atomics.load(array, i) >= BigInt(max)
    },
    // The thread lets go of the code's slot; the count stays in it (the main thread keeps the
    // code's slot), so the next lookup's answer names the same slot and the count goes on exact.
    drop(code) {
      slots.delete(code)
      own.drop(code)
    },
    get size() {
      return slots.size + own.size
    },
    *codes() {
      yield* slots.keys()
      yield* own.codes()
    },
    clear() {
      slots.clear()
      own.clear()
    },
  }
  return {
    counts,
    /** A block of slots the main thread made. */
    addBlock: (block: SharedArrayBuffer) => void blocks.push(new BigInt64Array(block)),
    /** The slot of a capped code (from its lookup's answer), before the answer seeds it. */
    know: (code: string, slot: number) => void slots.set(code, slot),
    /** The codes whose slot this thread holds (a sweep's question): the capped codes in its cache. */
    heldCodes: (): string[] => [...slots.keys()],
  }
}
