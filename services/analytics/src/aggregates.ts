import type { Breakdown, StoredScan } from './ports'

/** The dimensions a breakdown counts scans by, and the list each one fills. */
export const DIMENSIONS = ['country', 'device', 'os', 'browser'] as const
export type Dimension = (typeof DIMENSIONS)[number]

export interface DayCount { day: string; scans: number; uniques: number }
export interface DimCount { dim: string; value: string; scans: number }

/**
 * Increments of one batch of new scans, summed in memory so each aggregate row is written once
 * per batch however many scans it counts. `add` counts a scan under one key, its (code, day,
 * country, device, OS, browser) combination: one string and one map lookup per scan, where ten
 * aggregates each keyed apart cost ten (the ingestion profile of issue 14). The ten aggregate maps
 * are summed from the few distinct combinations when first read, after the last `add`.
 */
export function createTally() {
  interface Combination { scan: StoredScan; day: string; scans: number }
  const combinations = new Map<string, Combination>()
  const codeUniques = new Map<string, number>()
  const dayUniques = new Map<string, number>()
  let sums: ReturnType<typeof sum> | undefined

  function sum() {
    const codes = new Map<string, { code: string; scans: number; uniques: number }>()
    const days = new Map<string, { code: string; day: string; scans: number; uniques: number }>()
    const codeDims = new Map<string, { code: string; dim: Dimension; value: string; scans: number }>()
    const dayDims = new Map<string, { code: string; day: string; dim: Dimension; value: string; scans: number }>()
    const bump = <K extends { scans: number }>(map: Map<string, K>, key: string, scans: number, fresh: () => K): void => {
      let row = map.get(key)
      if (!row) map.set(key, (row = fresh()))
      row.scans += scans
    }
    for (const { scan, day, scans } of combinations.values()) {
      const { code } = scan
      const codeDay = `${code}\u0000${day}`
      bump(codes, code, scans, () => ({ code, scans: 0, uniques: codeUniques.get(code) ?? 0 }))
      bump(days, codeDay, scans, () => ({ code, day, scans: 0, uniques: dayUniques.get(codeDay) ?? 0 }))
      for (const dim of DIMENSIONS) {
        const value = scan[dim]
        bump(codeDims, `${code}\u0000${dim}\u0000${value}`, scans, () => ({ code, dim, value, scans: 0 }))
        bump(dayDims, `${codeDay}\u0000${dim}\u0000${value}`, scans, () => ({ code, day, dim, value, scans: 0 }))
      }
    }
    return { codes, days, codeDims, dayDims }
  }
  const summed = () => (sums ??= sum())

  return {
    get codes() {
      return summed().codes
    },
    get days() {
      return summed().days
    },
    get codeDims() {
      return summed().codeDims
    },
    get dayDims() {
      return summed().dayDims
    },
    /** Counts one new scan; `newVisitor`/`newDayVisitor`: its visitor was not seen before for the code / that day. */
    add(scan: StoredScan, day: string, newVisitor: boolean, newDayVisitor: boolean): void {
      const { code } = scan
      const key = `${code}\u0000${day}\u0000${scan.country}\u0000${scan.device}\u0000${scan.os}\u0000${scan.browser}`
      const row = combinations.get(key)
      if (row) row.scans++
      else combinations.set(key, { scan, day, scans: 1 })
      if (newVisitor) codeUniques.set(code, (codeUniques.get(code) ?? 0) + 1)
      if (newDayVisitor) {
        const codeDay = `${code}\u0000${day}`
        dayUniques.set(codeDay, (dayUniques.get(codeDay) ?? 0) + 1)
      }
      sums = undefined
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
