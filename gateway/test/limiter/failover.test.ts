import { describe, expect, it } from 'bun:test'
import { currentRequestId, withRequestId } from '@lr/platform/request-context'
import { createFailoverLimiter, createMemoryLimiter, type LimitPolicy, type RateLimiter } from '../../src/limiter'

const POLICY: LimitPolicy = { daily: 100, perSecond: 10, burst: 10 }

/** A primary whose health the test switches; it answers like a fresh memory limiter. */
function switchablePrimary() {
  const inner = createMemoryLimiter()
  const state = { up: true, hang: false, calls: 0 }
  const limiter: RateLimiter = {
    consume(key, policy) {
      state.calls++
      if (state.hang) return new Promise(() => {})
      return state.up ? inner.consume(key, policy) : Promise.reject(new Error('connection refused'))
    },
    ping: async () => state.up,
    close: async () => {},
  }
  return { limiter, state }
}

function setup(options: { probeIntervalMs?: number; timeoutMs?: number } = {}) {
  const primary = switchablePrimary()
  const fallback = createMemoryLimiter()
  const logs: string[] = []
  const clock = { ms: 0 }
  const limiter = createFailoverLimiter(primary.limiter, fallback, { ...options, log: (m) => logs.push(m), now: () => clock.ms })
  return { primary, fallback, logs, clock, limiter }
}

describe('failover limiter', () => {
  it('answers from the primary while it is up', async () => {
    const { limiter, fallback, logs } = setup()
    expect((await limiter.consume('k', POLICY)).allowed).toBe(true)
    expect(fallback.size()).toBe(0)
    expect(limiter.degraded()).toBe(false)
    expect(logs).toEqual([])
  })

  it('answers from the fallback and reports degraded when the primary rejects', async () => {
    const { limiter, fallback, primary } = setup()
    primary.state.up = false
    expect((await limiter.consume('k', POLICY)).allowed).toBe(true)
    expect(fallback.size()).toBe(1)
    expect(limiter.degraded()).toBe(true)
  })

  it('logs the degradation once however many requests fail', async () => {
    const { limiter, primary, logs, clock } = setup({ probeIntervalMs: 10 })
    primary.state.up = false
    for (let i = 0; i < 5; i++, clock.ms += 20) await limiter.consume('k', POLICY)
    expect(logs).toHaveLength(1)
    expect(logs[0]).toContain('Redis unreachable (connection refused)')
  })

  it('tries the primary at most once per probe interval while degraded', async () => {
    const { limiter, primary, clock } = setup({ probeIntervalMs: 1_000 })
    primary.state.up = false
    for (let i = 0; i < 10; i++) await limiter.consume('k', POLICY)
    expect(primary.state.calls).toBe(1)
    clock.ms += 1_000
    await limiter.consume('k', POLICY)
    expect(primary.state.calls).toBe(2)
  })

  it('returns to the primary and logs the recovery once when it answers again', async () => {
    const { limiter, primary, logs, clock } = setup({ probeIntervalMs: 1_000 })
    primary.state.up = false
    await limiter.consume('k', POLICY)
    primary.state.up = true
    clock.ms += 1_000
    await limiter.consume('k', POLICY)
    await limiter.consume('k', POLICY)
    expect(limiter.degraded()).toBe(false)
    expect(logs).toHaveLength(2)
    expect(logs[1]).toBe('rate limiter: Redis is back; limits are shared again')
  })

  it('logs its state changes as the process\'s, outside the request that noticed them, the pinger\'s recovery too', async () => {
    const primary = switchablePrimary()
    const ids: (string | undefined)[] = []
    const limiter = createFailoverLimiter(primary.limiter, createMemoryLimiter(), { probeIntervalMs: 10, log: () => ids.push(currentRequestId()) })
    primary.state.up = false
    await withRequestId('req-that-noticed', () => limiter.consume('k', POLICY))
    primary.state.up = true
    for (let i = 0; i < 100 && limiter.degraded(); i++) await Bun.sleep(5) // the pinger recovers, no request
    expect([limiter.degraded(), ids]).toEqual([false, [undefined, undefined]])
    await limiter.close()
  })

  it('gives up on a primary that hangs after timeoutMs and answers from the fallback', async () => {
    const { limiter, primary } = setup({ timeoutMs: 50 })
    primary.state.hang = true
    const started = performance.now()
    expect((await limiter.consume('k', POLICY)).allowed).toBe(true)
    expect(performance.now() - started).toBeLessThan(100)
    expect(limiter.degraded()).toBe(true)
  })
})
