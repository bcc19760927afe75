import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '@lr/proto'
import { ALL_TIME, type DayRange } from '../src/days'
import { ingestInWorker } from '../src/ingest-in-worker'
import type { Breakdown } from '../src/ports'
import { openAnalyticsStore } from '../src/start'
import { DAY, T0, UA } from './fixtures'

const COUNTRIES = Array.from({ length: 60 }, (_, i) => String.fromCharCode(65 + (i % 26), 65 + Math.floor(i / 26)))
const AGENTS = [UA.iphone, UA.ipad, UA.android, UA.windows]

/** Scan n of batch b: over three days, many countries, four kinds of client. */
const event = (b: number, n: number) => ({
  scan_id: `0190a000-0000-7000-8000-${String(b * 1000 + n).padStart(12, '0')}`,
  code: 'Code0001',
  scanned_at: T0 + (n % 3) * DAY + b,
  user_agent: AGENTS[(b + n) % AGENTS.length]!,
  visitor_id: (b * 7 + n).toString(16).padStart(64, '0'),
  country: COUNTRIES[(b * 13 + n) % COUNTRIES.length]!,
})

/** What does not add up in a breakdown: its total against its days and each dimension's buckets. */
function torn(b: Breakdown): string[] {
  const sums = {
    daily: b.daily.reduce((s, d) => s + d.scans, 0),
    countries: b.countries.reduce((s, d) => s + d.scans, 0),
    devices: b.devices.reduce((s, d) => s + d.scans, 0),
    os: b.os.reduce((s, d) => s + d.scans, 0),
    browsers: b.browsers.reduce((s, d) => s + d.scans, 0),
  }
  return Object.entries(sums).filter(([, sum]) => sum !== b.total_scans).map(([part, sum]) => `${part} ${sum} != total ${b.total_scans}`)
}

// The ingestion Worker of `bun start` commits batches on its own connection while the API thread
// reads: each breakdown is one read transaction, so it never mixes states (analytics-reads.sqlite.ts).
describe('breakdown reads on SQLite while scans are written', () => {
  const dirs: string[] = []
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })))

  it('answers totals equal to the sum of every list of buckets, all time and over a range', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lr-snapshot-'))
    dirs.push(dir)
    const worker = await ingestInWorker(dir)
    const reader = await openAnalyticsStore(loadConfig({ DATA_DIR: dir }))
    try {
      await worker.apply([0, 1, 2].map((n) => event(0, n)))
      let writing = true
      const batches = Array.from({ length: 400 }, (_, b) => worker.apply(Array.from({ length: 12 }, (_, n) => event(b + 1, n))))
      const written = Promise.all(batches).finally(() => (writing = false))
      const ranged: DayRange = { from: '2025-01-11', to: '2025-01-12' }
      const problems: string[] = []
      let reads = 0
      while (writing) {
        for (const range of [ALL_TIME, ranged]) problems.push(...torn(await reader.store.breakdown('Code0001', range)))
        reads++
        if (reads % 20 === 0) await new Promise((resolve) => setImmediate(resolve))
      }
      await written
      expect(reads).toBeGreaterThan(100)
      expect(problems.slice(0, 5)).toEqual([])
      expect((await reader.store.breakdown('Code0001', ALL_TIME)).total_scans).toBe(3 + 400 * 12)
    } finally {
      await worker.close()
      await reader.close()
    }
  }, 30_000)
})
