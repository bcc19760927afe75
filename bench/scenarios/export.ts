import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { adminIn, newDataDir, type Product, startOneProcess } from '../product'
import { ROOT, runToEnd } from '../procs'
import { ceilingRow, fmt, floorRow, type Row } from '../report'
import { sampleRss } from '../rss'

import { TARGETS } from '../targets'

export interface Download {
  status: number
  bytes: number
  lines: number
  seconds: number
  firstByteMs: number
}

/** Runs a seeding process (bench/seed.ts); resolves with its report. */
export async function seed(...argv: string[]): Promise<{ rows: number; seconds: number }> {
  const { stdout } = await runToEnd(['bun', 'run', join(ROOT, 'bench/seed.ts'), ...argv])
  return JSON.parse(stdout.trim().split('\n').at(-1)!)
}

/** Streams one export from a separate client process while sampling the server's memory. */
export async function download(product: Product, path: string, key: string) {
  const rss = sampleRss(product.gatewayPid!)
  const { stdout } = await runToEnd(['bun', 'run', join(ROOT, 'bench/clients/download.ts'), `${product.api}${path}`, key])
  const memory = rss.stop()
  const result = JSON.parse(stdout) as Download
  if (result.status !== 200) throw new Error(`GET ${path}: ${result.status}`)
  return { ...result, ...memory, rows: result.lines - 1 }
}

/** One CSV export row pair against `target` (TARGETS.recordExport or .scanExport): rows/s against the floor, peak RSS (VmHWM) against the ceiling. */
export function exportRows(scenario: string, what: string, size: number, got: Awaited<ReturnType<typeof download>>,
  target: { rowsPerS: number; maxRss: number }): Row[] {
  if (got.rows !== size) throw new Error(`${what}: ${got.rows} rows exported, ${size} seeded`)
  const base = (metric: string) => ({ scenario, metric, order: 5 })
  return [
    floorRow(base(`${what} ${fmt.int(size)} rows: rows/s`), got.rows / got.seconds, target.rowsPerS, fmt.rps,
      `${fmt.rps(target.rowsPerS)} (target); ${got.seconds.toFixed(2)} s, ${fmt.mb(got.bytes)} CSV`),
    ceilingRow(base(`${what} ${fmt.int(size)} rows: peak RSS`), got.hwm, target.maxRss, fmt.mb, `${fmt.mb(target.maxRss)} (target); ${fmt.mb(got.start)} before`),
  ]
}

export function growthRow(scenario: string, what: string, small: number, large: number, sizes: number[]): Row {
  return ceilingRow(
    { scenario, metric: `${what}: peak RSS ${fmt.int(sizes.at(-1)!)} / ${fmt.int(sizes[0]!)} rows`, order: 5 },
    large / small, TARGETS.recordExport.maxGrowth, fmt.x, `${fmt.mb(small)} → ${fmt.mb(large)}`,
  )
}

/**
 * Scenario 5 (records): per size, a DATA_DIR seeded with that many static and dynamic records of
 * one library, then a fresh one-process product per export (so each peak RSS is its own).
 */
export async function exportScenario(sizes: number[], log: (line: string) => void): Promise<Row[]> {
  const scenario = '5 CSV export, one process'
  const rows: Row[] = []
  const peaks: Record<string, number[]> = { static: [], dynamic: [] }
  for (const size of sizes) {
    const dataDir = newDataDir()
    try {
      const admin = adminIn(dataDir)
      const { account_id } = await admin('account', 'create', '--email', `export-${size}@bench.test`, '--tier', 'pro')
      const { key } = await admin('key', 'create', '--account', account_id, '--scope', 'personal')
      const library = `acct:${account_id}`
      const seeded = await Promise.all([seed('static', dataDir, library, account_id, String(size)), seed('dynamic', dataDir, library, account_id, String(size))])
      log(`seeded ${fmt.int(size)} static + dynamic records in ${Math.max(...seeded.map((s) => s.seconds)).toFixed(1)} s`)
      for (const [what, path] of [['static', '/v1/qrcodes/export'], ['dynamic', '/v1/dynqrcodes/export']] as const) {
        const product = await startOneProcess(dataDir)
        try {
          const got = await download(product, path, key)
          log(`${what} export of ${fmt.int(size)}: ${got.seconds.toFixed(2)} s, peak ${fmt.mb(got.hwm)}`)
          rows.push(...exportRows(scenario, `${what} export`, size, got, TARGETS.recordExport))
          peaks[what]!.push(got.hwm)
        } finally {
          await product.stop()
        }
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
  if (sizes.length > 1)
    for (const what of ['static', 'dynamic']) rows.push(growthRow(scenario, `${what} export`, peaks[what]![0]!, peaks[what]!.at(-1)!, sizes))
  return rows
}
