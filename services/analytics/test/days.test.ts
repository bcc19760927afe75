import { describe, expect, it } from 'bun:test'
import { coversAll, dayOf, msRange } from '../src/days'
import { parseDayRange } from '../src/day-query'
import { failure } from './fixtures'

const badRequest = (message: string) => ({ code: 'bad_request' as const, message })
const parse = async (query: Record<string, string>) => parseDayRange(query)

describe('parseDayRange', () => {
  it('answers an unbounded range for an empty query', () => {
    expect(parseDayRange({})).toEqual({ from: null, to: null })
  })

  it('keeps from and to as given', () => {
    expect(parseDayRange({ from: '2025-01-10', to: '2025-01-12' })).toEqual({ from: '2025-01-10', to: '2025-01-12' })
  })

  it('accepts from equal to to (one day)', () => {
    expect(parseDayRange({ from: '2024-02-29', to: '2024-02-29' })).toEqual({ from: '2024-02-29', to: '2024-02-29' })
  })

  it('rejects a day that does not exist', async () => {
    expect(await failure(parse({ from: '2025-02-30' }))).toEqual(badRequest('from must be a date YYYY-MM-DD (UTC)'))
  })

  it('rejects a date in another format', async () => {
    expect(await failure(parse({ to: '10/01/2025' }))).toEqual(badRequest('to must be a date YYYY-MM-DD (UTC)'))
  })

  it('rejects a date with a time', async () => {
    expect(await failure(parse({ from: '2025-01-10T00:00:00Z' }))).toEqual(badRequest('from must be a date YYYY-MM-DD (UTC)'))
  })

  it('rejects from after to', async () => {
    expect(await failure(parse({ from: '2025-01-11', to: '2025-01-10' }))).toEqual(badRequest('from must not be after to'))
  })

  it('accepts any span, from the first day a YYYY-MM-DD names to the last (no window, no longest range)', () => {
    expect(parseDayRange({ from: '0000-01-01', to: '9999-12-31' })).toEqual({ from: '0000-01-01', to: '9999-12-31' })
  })

  it('rejects a five-digit year and epoch seconds', async () => {
    expect(await failure(parse({ to: '10000-01-01' }))).toEqual(badRequest('to must be a date YYYY-MM-DD (UTC)'))
    expect(await failure(parse({ from: '1764115200' }))).toEqual(badRequest('from must be a date YYYY-MM-DD (UTC)'))
  })

  it('rejects an unknown parameter by name', async () => {
    expect(await failure(parse({ since: '2025-01-10' }))).toEqual(badRequest('unknown query parameter "since"'))
  })
})

describe('day helpers', () => {
  it('puts a time in its UTC day', () => {
    expect(dayOf(Date.UTC(2025, 0, 10, 23, 59, 59, 999))).toBe('2025-01-10')
    expect(dayOf(Date.UTC(2025, 0, 11))).toBe('2025-01-11')
  })

  it('names each time its own day, whatever day the call before it named (before 1970 and at both ends of a day too)', () => {
    const direct = (ms: number) => new Date(ms).toISOString().slice(0, 10)
    const DAY = 86_400_000
    const times = [0, -1, DAY - 1, DAY, -DAY, -DAY - 1, Date.UTC(2025, 0, 10), Date.UTC(2025, 0, 10) - 1, Date.UTC(2025, 0, 10) + DAY - 1]
    for (let i = 0; i < 2_000; i++) times.push(Math.round((Math.random() - 0.3) * 4e12))
    // In order (each end of a day right after the other), then each beside a far one: the
    // remembered day is crossed both ways.
    for (const ms of times) expect(dayOf(ms)).toBe(direct(ms))
    for (let i = 0; i < times.length; i++) {
      expect(dayOf(times[i]!)).toBe(direct(times[i]!))
      expect(dayOf(times[(i * 7) % times.length]!)).toBe(direct(times[(i * 7) % times.length]!))
    }
  })

  it('turns a range into milliseconds from 00:00 of from to 00:00 after to', () => {
    expect(msRange({ from: '2025-01-10', to: '2025-01-11' })).toEqual({ start: Date.UTC(2025, 0, 10), end: Date.UTC(2025, 0, 12) })
    expect(msRange({ from: null, to: null })).toEqual({ start: 0, end: Number.MAX_SAFE_INTEGER })
  })

  it('tells whether a range holds every day of a history', () => {
    expect(coversAll({ from: null, to: null }, '2025-01-10', '2025-01-12')).toBe(true)
    expect(coversAll({ from: '2025-01-10', to: '2025-01-12' }, '2025-01-10', '2025-01-12')).toBe(true)
    expect(coversAll({ from: '2025-01-11', to: null }, '2025-01-10', '2025-01-12')).toBe(false)
    expect(coversAll({ from: null, to: '2025-01-11' }, '2025-01-10', '2025-01-12')).toBe(false)
  })
})
