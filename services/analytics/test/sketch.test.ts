import { describe, expect, it } from 'bun:test'
import { addVisitor, estimate, mergeInto, newSketch, SKETCH_PRECISION, sketchOf } from '../src/sketch'
import { uniquesOver } from '../src/range-uniques'

const sketchOfVisitors = (from: number, to: number) => {
  const sketch = newSketch()
  for (let i = from; i < to; i++) addVisitor(sketch, `visitor-${i}`)
  return sketch
}

describe('visitor sketch', () => {
  it('is 2^14 one-byte registers', () => {
    expect(newSketch().length).toBe(2 ** SKETCH_PRECISION)
    expect(() => sketchOf(new Uint8Array(10))).toThrow()
  })

  it('counts small sets exactly and large ones within 2 %', () => {
    expect(estimate(newSketch())).toBe(0)
    expect(estimate(sketchOfVisitors(0, 1))).toBe(1)
    expect(estimate(sketchOfVisitors(0, 50))).toBe(50)
    for (const n of [5_000, 40_000, 100_000, 1_000_000]) {
      expect(Math.abs(estimate(sketchOfVisitors(0, n)) - n) / n).toBeLessThan(0.02)
    }
  })

  it('is idempotent: a visitor added twice counts once', () => {
    const once = sketchOfVisitors(0, 10_000)
    const twice = sketchOfVisitors(0, 10_000)
    for (let i = 0; i < 10_000; i++) addVisitor(twice, `visitor-${i}`)
    expect(twice).toEqual(once)
  })

  it('merges into the sketch of the union', () => {
    const a = sketchOfVisitors(0, 30_000)
    mergeInto(a, sketchOfVisitors(20_000, 60_000))
    expect(a).toEqual(sketchOfVisitors(0, 60_000))
  })
})

describe('uniquesOver', () => {
  const days = (...uniques: number[]) => uniques.map((u, i) => ({ day: `2025-01-1${i}`, scans: u, uniques: u }))
  const never = () => {
    throw new Error('not to be read')
  }

  it('counts exactly up to the limit of visitor-days, without sketches', async () => {
    expect(await uniquesOver(days(10, 10), { exact: () => 15, sketches: never }, 20)).toBe(15)
  })

  it('estimates above it, within what the daily counts prove', async () => {
    const day1 = sketchOfVisitors(0, 300)
    const day2 = sketchOfVisitors(150, 450)
    const got = await uniquesOver(days(300, 300), { exact: never, sketches: () => [day1, day2] }, 100)
    expect(Math.abs(got - 450)).toBeLessThanOrEqual(9)
    // A sketch can't prove fewer than the busiest day nor more than the sum.
    expect(await uniquesOver(days(300, 300), { exact: never, sketches: () => [newSketch()] }, 100)).toBe(300)
    expect(await uniquesOver(days(3, 3), { exact: never, sketches: () => [sketchOfVisitors(0, 1000)] }, 1)).toBe(6)
  })
})
