import { describe, expect, it } from 'bun:test'
import { CONCURRENCY, createSlots, PER_ENDPOINT, PER_LIBRARY, SKIPPING_COST_RATIO, SKIPPING_WAIT_MAX_MS } from '../src/slots'

/** Each endpoint of its own library unless the test says otherwise. */
const own = (endpointId: string) => `acct:${endpointId}`

describe('the delivery worker\'s slots', () => {
  it(`counts attempts per endpoint: one is full at ${PER_ENDPOINT}, and free again when one of them ends`, () => {
    const slots = createSlots()
    for (let i = 0; i < PER_ENDPOINT; i++) slots.take('wh_1', own('wh_1'))
    slots.take('wh_2', own('wh_2'))
    expect([slots.room(), slots.full('wh_1', own('wh_1')), slots.full('wh_2', own('wh_2')), slots.fullEndpoints()]).toEqual([CONCURRENCY - PER_ENDPOINT - 1, true, false, ['wh_1']])
    slots.give('wh_1')
    slots.give('wh_2')
    expect([slots.room(), slots.full('wh_1', own('wh_1')), slots.fullEndpoints()]).toEqual([CONCURRENCY - PER_ENDPOINT + 1, false, []])
  })

  it('lets an endpoint start what its cap and the pool leave', () => {
    const slots = createSlots()
    slots.take('wh_1', own('wh_1'))
    expect([slots.free('wh_1'), slots.free('wh_2')]).toEqual([PER_ENDPOINT - 1, PER_ENDPOINT])
    for (let i = 1; i < CONCURRENCY - 1; i++) slots.take(`wh_other_${i}`, own(`wh_other_${i}`))
    expect([slots.free('wh_1'), slots.free('wh_2')]).toEqual([1, 1])
  })

  it(`counts attempts per library: its endpoints are full at ${PER_LIBRARY}, and it is forgotten once none is in flight`, () => {
    const slots = createSlots()
    const endpoints = Array.from({ length: PER_LIBRARY / PER_ENDPOINT + 1 }, (_, i) => `wh_${i}`)
    for (const id of endpoints.slice(0, -1)) for (let i = 0; i < PER_ENDPOINT; i++) slots.take(id, 'acct:greedy')
    const idle = endpoints.at(-1)!
    // The library's idle endpoint: full once its messages name the library, and skipped from then on.
    expect([slots.free(idle), slots.full(idle, 'acct:greedy'), slots.free(idle), slots.full('wh_other', 'acct:other')]).toEqual([PER_ENDPOINT, true, 0, false])
    expect(slots.fullEndpoints().sort()).toEqual(endpoints.sort())
    slots.give('wh_0')
    expect([slots.full(idle, 'acct:greedy'), slots.free(idle), slots.fullEndpoints().sort()]).toEqual([false, 1, endpoints.slice(1, -1).sort()])
    for (const id of endpoints.slice(0, -1)) for (let i = id === 'wh_0' ? 1 : 0; i < PER_ENDPOINT; i++) slots.give(id)
    expect([slots.room(), slots.fullEndpoints(), slots.free(idle)]).toEqual([CONCURRENCY, [], PER_ENDPOINT])
  })

  it('names the endpoints whose attempts ended or that were given new messages, once', () => {
    const slots = createSlots()
    slots.take('wh_1', own('wh_1'))
    slots.take('wh_2', own('wh_2'))
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
