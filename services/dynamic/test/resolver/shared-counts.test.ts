import { describe, expect, it } from 'bun:test'
import { createCountSlots, createSharedScanCounts, SLOTS_PER_BLOCK } from '../../src/resolver/shared-counts'

/** Two threads' counts over the same slots, as ./threads.ts wires them (here in one thread). */
function twoThreads() {
  const a = createSharedScanCounts()
  const b = createSharedScanCounts()
  const slots = createCountSlots((block) => (a.addBlock(block), b.addBlock(block)))
  const lookedUp = (code: string, scans: number) => {
    const slot = slots.slotOf(code)
    a.know(code, slot)
    b.know(code, slot)
    a.counts.seed(code, scans)
    b.counts.seed(code, scans)
  }
  /** What the two threads answer a sweep. */
  const held = () => [...a.heldCodes(), ...b.heldCodes()]
  return { a: a.counts, b: b.counts, slots, lookedUp, held }
}

describe('shared scan counts', () => {
  it('count one cap for every thread: takes alternate between them and stop at max_scans', () => {
    const { a, b, lookedUp } = twoThreads()
    lookedUp('code1', 2)
    const taken = Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).take('code1', 7))
    expect(taken.filter(Boolean)).toHaveLength(5)
    expect([a.capped('code1', 7), b.capped('code1', 7), a.capped('code1', 8)]).toEqual([true, true, false])
  })

  it('keep the larger of the shared count and a later lookup\'s, never going down', () => {
    const { a, b, lookedUp } = twoThreads()
    lookedUp('code1', 3)
    a.take('code1', 100)
    b.seed('code1', 2)
    expect(a.capped('code1', 4)).toBe(true)
    b.seed('code1', 10)
    expect([a.capped('code1', 10), a.capped('code1', 11)]).toEqual([true, false])
  })

  it('give each capped code its own slot, past one block, and the same slot when asked again', () => {
    const { a, b, slots, lookedUp } = twoThreads()
    for (let i = 0; i < SLOTS_PER_BLOCK + 10; i++) lookedUp(`code${i}`, i % 3)
    expect(slots.blocks()).toHaveLength(2)
    expect(slots.slotOf('code5')).toBe(5)
    const last = `code${SLOTS_PER_BLOCK + 9}`
    expect(a.take(last, 2)).toBe(true)
    expect(b.take(last, 2)).toBe(false)
    expect(a.capped('code4', 2)).toBe(false)
    expect(b.take('code4', 2)).toBe(true)
    expect(a.capped('code4', 2)).toBe(true)
  })

  it('free by a sweep the slots no thread holds, keep those handed out while it asked, and give a freed one on at zero', () => {
    const { a, b, slots, lookedUp, held } = twoThreads()
    for (const code of ['kept', 'gone', 'late']) lookedUp(code, 1)
    // Both threads' caches dropped `gone`; `late` is looked up again while they are being asked.
    for (const counts of [a, b]) counts.drop('gone')
    slots.sweepStarted()
    lookedUp('late', 1)
    expect(slots.sweepEnded(new Set(held().filter((code) => code !== 'late')))).toBe(1)
    expect(slots.size).toBe(2)
    // A thread that did not answer: nothing is freed.
    slots.sweepStarted()
    expect(slots.sweepEnded(undefined)).toBe(0)
    lookedUp('new', 0)
    expect([slots.slotOf('new'), a.take('new', 1), b.take('new', 1)]).toEqual([1, true, false])
  })

  it('count a code without a slot in the thread alone, and forget slots on clear', () => {
    const { a, b } = twoThreads()
    a.seed('solo', 1)
    expect([a.has('solo'), b.has('solo'), a.take('solo', 2), a.take('solo', 2), b.take('solo', 2)]).toEqual([true, false, true, false, true])
    a.clear()
    expect(a.has('solo')).toBe(false)
  })
})
