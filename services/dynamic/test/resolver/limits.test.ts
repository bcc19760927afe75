import { describe, expect, it } from 'bun:test'
import { answerLimited, createScanCounts, limitsOf } from '../../src/resolver/limits'
import { destinationOf } from '../../src/resolver/location'

const entry = { code: 'Code0001', destination_url: 'https://example.com/offer', status: 'active' as const, deleted: false }

describe('limits of a resolver entry', () => {
  it('has none without expires_at and max_scans, even with a fallback_url', () => {
    expect(limitsOf(entry)).toBeUndefined()
    expect(limitsOf({ ...entry, fallback_url: 'https://example.com/over' })).toBeUndefined()
  })

  it('prepares expiry in milliseconds, the cap and the fallback once', () => {
    const limits = limitsOf({ ...entry, expires_at: 1_900_000_000, max_scans: 3, fallback_url: 'https://example.com/over' })!
    expect(limits.expiresAtMs).toBe(1_900_000_000_000)
    expect(limits.maxScans).toBe(3)
    expect(limits.fallback?.location).toBe('https://example.com/over')
  })
})

describe('scan counts', () => {
  it('keeps the larger of its own count and a lookup\'s', () => {
    const counts = createScanCounts()
    counts.seed('a', 2)
    expect(counts.take('a', 4)).toBe(true)
    counts.seed('a', 1)
    expect(counts.take('a', 4)).toBe(true)
    expect(counts.take('a', 4)).toBe(false)
    counts.seed('b', 5)
    expect(counts.capped('b', 5)).toBe(true)
  })
})

describe('answerLimited', () => {
  const published: (string | undefined)[] = []
  const deps = (nowMs: number) => ({ counts: createScanCounts(), now: () => nowMs, publish: (_scan: unknown, outcome?: 'fallback') => void published.push(outcome) })
  const request = new Request('http://short.test/Code0001')
  const destination = destinationOf('https://example.com/offer')

  it('sends exactly max_scans counted scans to the destination, then the fallback, publishing each with its outcome', () => {
    published.length = 0
    const d = deps(0)
    const limits = limitsOf({ ...entry, max_scans: 2, fallback_url: 'https://example.com/over' })!
    const where = () => answerLimited(d, request, 'Code0001', destination, limits, '?a=1', true).headers.get('location')
    expect([where(), where(), where()]).toEqual(['https://example.com/offer?a=1', 'https://example.com/offer?a=1', 'https://example.com/over?a=1'])
    expect(published).toEqual([undefined, undefined, 'fallback'])
  })

  it('answers 410 once expired without a fallback, counting nothing for an uncounted request', async () => {
    published.length = 0
    const limits = limitsOf({ ...entry, expires_at: 10 })!
    const before = answerLimited(deps(9_999), request, 'Code0001', destination, limits, '', false)
    expect(before.status).toBe(302)
    const after = answerLimited(deps(10_000), request, 'Code0001', destination, limits, '', true)
    expect([after.status, await after.text()]).toEqual([410, 'Gone: this short link has expired.\n'])
    expect(published).toEqual([])
  })
})
