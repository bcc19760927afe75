import { createScanCounts, type ScanCounts } from './limits'

/**
 * Capped codes' counts shared by every resolver thread of a process, so that the process stays
 * exact at the cap (README "Expiring and capped codes") however its threads share the scans. A
 * count is a 64-bit slot of shared memory, raised by compare-and-swap; the main thread gives each
 * capped code its slot when it answers the code's lookup, and hands every block of slots to
 * every thread before any answer that names a slot in it.
 */
export const SLOTS_PER_BLOCK = 4096

/** Main thread: the slot of each capped code; a new block of slots is announced to the threads. */
export function createCountSlots(announce: (block: SharedArrayBuffer) => void) {
  const slots = new Map<string, number>()
  const blocks: SharedArrayBuffer[] = []
  return {
    slotOf(code: string): number {
      let slot = slots.get(code)
      if (slot === undefined) {
        slot = slots.size
        if (slot % SLOTS_PER_BLOCK === 0) {
          const block = new SharedArrayBuffer(SLOTS_PER_BLOCK * BigInt64Array.BYTES_PER_ELEMENT)
          blocks.push(block)
          announce(block)
        }
        slots.set(code, slot)
      }
      return slot
    },
    /** Every block so far (a thread that starts late gets them first). */
    blocks: (): readonly SharedArrayBuffer[] => blocks,
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
  }
}
