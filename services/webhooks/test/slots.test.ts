import { describe, expect, it } from 'bun:test'
import { CONCURRENCY, createSlots, PER_ENDPOINT, SKIPPING_COST_RATIO, SKIPPING_WAIT_MAX_MS } from '../src/slots'

describe('the delivery worker\'s slots', () => {
  it(`counts attempts per endpoint: one is full at ${PER_ENDPOINT}, and free again when one of them ends`, () => {
    const slots = createSlots()
    for (let i = 0; i < PER_ENDPOINT; i++) slots.take('wh_1')
    slots.take('wh_2')
    expect([slots.room(), slots.full('wh_1'), slots.full('wh_2'), slots.fullEndpoints()]).toEqual([CONCURRENCY - PER_ENDPOINT - 1, true, false, ['wh_1']])
    slots.give('wh_1')
    slots.give('wh_2')
    expect([slots.room(), slots.full('wh_1'), slots.fullEndpoints()]).toEqual([CONCURRENCY - PER_ENDPOINT + 1, false, []])
  })

  it('lets an endpoint start what its cap and the pool leave', () => {
    const slots = createSlots()
    slots.take('wh_1')
    expect([slots.free('wh_1'), slots.free('wh_2')]).toEqual([PER_ENDPOINT - 1, PER_ENDPOINT])
    for (let i = 1; i < CONCURRENCY - 1; i++) slots.take(`wh_other_${i}`)
    expect([slots.free('wh_1'), slots.free('wh_2')]).toEqual([1, 1])
  })

  it('names the endpoints whose attempts ended or that were given new messages, once', () => {
    const slots = createSlots()
    slots.take('wh_1')
    slots.take('wh_2')
    slots.give('wh_1')
    slots.mark(['wh_3', 'wh_1'])
    expect(slots.marked().sort()).toEqual(['wh_1', 'wh_3'])
    expect(slots.marked()).toEqual([])
  })

  it(`waits ${SKIPPING_COST_RATIO} times as long as a skipping look took before the next, at most ${SKIPPING_WAIT_MAX_MS} ms`, async () => {
    let now = 1_000
    const slots = createSlots(() => now)
    expect(slots.skippingWait()).toBe(0)
    await slots.skipping(async () => {
      now += 7 // a look past a long backlog
    })
    expect(slots.skippingWait()).toBe(7 * SKIPPING_COST_RATIO)
    now += 100
    expect(slots.skippingWait()).toBe(7 * SKIPPING_COST_RATIO - 100)
    await slots.skipping(async () => {
      now += 500
    })
    expect(slots.skippingWait()).toBe(SKIPPING_WAIT_MAX_MS)
  })

  it('sets the wait after a look that failed too', async () => {
    let now = 0
    const slots = createSlots(() => now)
    await expect(slots.skipping(async () => {
      now += 2
      throw new Error('store down')
    })).rejects.toThrow('store down')
    expect(slots.skippingWait()).toBe(2 * SKIPPING_COST_RATIO)
  })
})
