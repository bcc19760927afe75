import { describe, expect, it } from 'bun:test'
import { failureOf, retryDelay } from '../src/worker'

const settings = { allowPrivate: false, retryBaseMs: 5000, retryMaxMs: 3_600_000, retryWindowMs: 86_400_000, timeoutMs: 10_000 }

describe('retry delays', () => {
  it('doubles from the base per attempt, within ±25 % jitter, capped at the maximum', () => {
    for (let attempts = 1; attempts <= 30; attempts++) {
      const nominal = Math.min(3_600_000, 5000 * 2 ** (attempts - 1))
      for (let i = 0; i < 50; i++) {
        const delay = retryDelay(settings, attempts)
        expect(delay).toBeGreaterThanOrEqual(Math.floor(nominal * 0.75))
        expect(delay).toBeLessThanOrEqual(Math.ceil(nominal * 1.25))
      }
    }
  })

  it('spreads retries (jitter): not every delay is the same', () => {
    expect(new Set(Array.from({ length: 20 }, () => retryDelay(settings, 3))).size).toBeGreaterThan(1)
  })

  it('fits about 30 attempts into the 24 h window with the defaults', () => {
    let elapsed = 0
    let attempts = 0
    while (elapsed <= settings.retryWindowMs) elapsed += Math.min(3_600_000, 5000 * 2 ** attempts++)
    expect(attempts).toBeGreaterThan(25)
    expect(attempts).toBeLessThan(40)
  })
})

describe('failureOf', () => {
  it("keeps the runtime's reason and drops the advice Bun appends for its own users", async () => {
    const refused = await fetch('http://127.0.0.1:1/').then(() => null, (error: unknown) => error)
    expect(failureOf(refused)).toContain('Unable to connect')
    expect(failureOf(new Error('self signed certificate. For more information, pass `verbose: true` in the second argument to fetch()'))).toBe('self signed certificate.')
    expect(failureOf('plain')).toBe('plain')
  })
})
