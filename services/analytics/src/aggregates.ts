import type { Breakdown, StoredScan } from './ports'

/** The dimensions a breakdown counts scans by, and the list each one fills. */
export const DIMENSIONS = ['country', 'device', 'os', 'browser'] as const
export type Dimension = (typeof DIMENSIONS)[number]

export interface DayCount { day: string; scans: number; uniques: number }
export interface DimCount { dim: string; value: string; scans: number }

/**
 * Increments of one batch of new scans, summed in memory so each aggregate row is written once
 * per batch however many scans it counts.
 */
export function createTally() {
  const codes = new Map<string, { code: string; scans: number; uniques: number }>()
  const days = new Map<string, { code: string; day: string; scans: number; uniques: number }>()
  const codeDims = new Map<string, { code: string; dim: Dimension; value: string; scans: number }>()
  const dayDims = new Map<string, { code: string; day: string; dim: Dimension; value: string; scans: number }>()

  function bump<K extends { scans: number }>(map: Map<string, K>, key: string, fresh: () => K): K {
    let row = map.get(key)
    if (!row) map.set(key, (row = fresh()))
    row.scans++
    return row
  }

  return {
    codes, days, codeDims, dayDims,
    /** Counts one new scan; `newVisitor`/`newDayVisitor`: its visitor was not seen before for the code / that day. */
    add(scan: StoredScan, day: string, newVisitor: boolean, newDayVisitor: boolean): void {
      const { code } = scan
      bump(codes, code, () => ({ code, scans: 0, uniques: 0 })).uniques += Number(newVisitor)
      bump(days, `${code}\u0000${day}`, () => ({ code, day, scans: 0, uniques: 0 })).uniques += Number(newDayVisitor)
      for (const dim of DIMENSIONS) {
        const value = scan[dim]
        bump(codeDims, `${code}\u0000${dim}\u0000${value}`, () => ({ code, dim, value, scans: 0 }))
        bump(dayDims, `${code}\u0000${day}\u0000${dim}\u0000${value}`, () => ({ code, day, dim, value, scans: 0 }))
      }
    },
  }
}
export type Tally = ReturnType<typeof createTally>

const byScans = (a: { value: string; scans: number }, b: { value: string; scans: number }) =>
  b.scans - a.scans || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)

/** Assembles a breakdown from a store's rows: `daily` ascending by day, every list by scans descending (ties by name). */
export function breakdownOf(totals: { scans: number; uniques: number }, days: DayCount[], dims: DimCount[]): Breakdown {
  const list = <K extends string>(dim: Dimension, key: K) =>
    dims.filter((d) => d.dim === dim && d.scans > 0).sort(byScans).map((d) => ({ [key]: d.value, scans: d.scans }) as { [P in K]: string } & { scans: number })
  return {
    total_scans: totals.scans,
    unique_scans: totals.uniques,
    daily: [...days].sort((a, b) => (a.day < b.day ? -1 : 1)).map((d) => ({ date: d.day, scans: d.scans, unique_scans: d.uniques })),
    countries: list('country', 'country'),
    devices: list('device', 'device'),
    os: list('os', 'os'),
    browsers: list('browser', 'browser'),
  }
}

export const emptyBreakdown = (): Breakdown => breakdownOf({ scans: 0, uniques: 0 }, [], [])
