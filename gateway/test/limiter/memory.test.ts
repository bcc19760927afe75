import { describe, expect, it } from 'bun:test'
import { createMemoryLimiter } from '../../src/limiter'
import { limiterContract, NOON } from './limiter.contract'

const POLICY = { daily: 100, perSecond: 10, burst: 5 }

describe('memory limiter', () => {
  limiterContract((now) => createMemoryLimiter({ now }))

  it('forgets buckets that are full again and belong to an earlier day', async () => {
    const clock = { ms: NOON }
    const limiter = createMemoryLimiter({ now: () => clock.ms, sweepEvery: 10 })
    for (let i = 0; i < 9; i++) await limiter.consume(`old-${i}`, POLICY)
    clock.ms += 86_400_000
    await limiter.consume('new', POLICY)
    expect(limiter.size()).toBe(1)
  })

  it('keeps buckets that still count today', async () => {
    const clock = { ms: NOON }
    const limiter = createMemoryLimiter({ now: () => clock.ms, sweepEvery: 10 })
    for (let i = 0; i < 9; i++) await limiter.consume(`today-${i}`, POLICY)
    clock.ms += 60_000
    await limiter.consume('new', POLICY)
    expect(limiter.size()).toBe(10)
  })

  it('holds at most maxKeys buckets, dropping the least recently admitted', async () => {
    const limiter = createMemoryLimiter({ now: () => NOON, maxKeys: 3 })
    for (const key of ['a', 'b', 'c', 'a', 'd']) await limiter.consume(key, POLICY)
    expect(limiter.size()).toBe(3)
    expect((await limiter.consume('a', POLICY)).burst.remaining).toBe(2)
    expect((await limiter.consume('b', POLICY)).burst.remaining).toBe(4)
  })
})
