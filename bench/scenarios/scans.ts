import { rmSync } from 'node:fs'
import { connect } from 'nats'
import { SCAN_BATCH_STREAM } from '@lr/platform/scan-stream-config'
import { join } from 'node:path'
import { waitUntil } from '../../test/harness/ports'
import { adminIn, api, member, newDataDir, type Product, startOneProcess } from '../product'
import { ROOT, runToEnd } from '../procs'
import { ceilingRow, countRow, fmt, floorRow, type Row } from '../report'
import type { Settings } from '../settings'
import { download, exportRows, seed } from './export'
import { TARGETS } from '../targets'
import type { ScanCounter } from './resolver'

/** total_scans of a code as the API reports it, or -1 while its analytics do not answer. */
export async function totalScans(product: Product, key: string, code: string): Promise<number> {
  const response = await fetch(`${product.api}/v1/dynqrcodes/${code}/analytics`, { headers: { 'x-api-key': key } })
  if (response.status !== 200) return -1
  return ((await response.json()) as { total_scans: number }).total_scans
}

/**
 * Scenarios 1/2: waits (up to 30 s) until analytics count at least `atLeast` scans of the code,
 * then until the count stops moving, and returns it.
 */
export const countScans: ScanCounter = async (product, key, code, atLeast) => {
  await waitUntil(async () => (await totalScans(product, key, code)) >= atLeast, 30_000, `analytics to count ${atLeast} scans of ${code}`).catch(() => undefined)
  return settledCount(product, key, code)
}

/**
 * Scenario 2: seconds from `loadEnded` (a performance.now()) until the relay's consumer of
 * SCAN_BATCHES has nothing pending or unacknowledged, so SCANS holds every scan.
 */
export async function relayTrail(product: Product, loadEnded: number): Promise<number> {
  const nc = await connect({ servers: product.env.NATS_URL })
  try {
    const jsm = await nc.jetstreamManager()
    await waitUntil(async () => {
      const { num_pending, num_ack_pending } = await jsm.consumers.info(SCAN_BATCH_STREAM, 'scans-relay')
      return num_pending === 0 && num_ack_pending === 0
    }, 120_000, 'the relay to copy every scan to SCANS')
    return (performance.now() - loadEnded) / 1000
  } finally {
    await nc.close()
  }
}

/** The code's count once it has not moved for three reads half a second apart. */
export async function settledCount(product: Product, key: string, code: string): Promise<number> {
  let counted = await totalScans(product, key, code)
  for (let stable = 0; stable < 3; ) {
    await Bun.sleep(500)
    const now = await totalScans(product, key, code)
    stable = now === counted ? stable + 1 : 0
    counted = now
  }
  return counted
}

/**
 * Scenario 6: N scan events published to JetStream by a separate process while the analytics
 * process of the NATS deployment consumes them; scans/s from the first publish until the API
 * reports all N, and lost = N - counted.
 */
export async function ingestScenario(product: Product, settings: Settings): Promise<Row[]> {
  const scenario = '6 scan ingestion, JetStream'
  const { key } = await member(product, 'ingest')
  const code = (await api(product, key, 'POST', '/v1/dynqrcodes', { destination_url: 'https://example.com/ingest', name: 'Ingest' })).json.created[0].code as string
  const n = settings.ingest
  const publisher = runToEnd(['bun', 'run', join(ROOT, 'bench/clients/publish-scans.ts'), product.env.NATS_URL!, code, String(n)])
  let counted = 0
  let doneAt = 0
  const deadline = Date.now() + Math.max(60_000, n / 2)
  while (Date.now() < deadline) {
    counted = Math.max(counted, await totalScans(product, key, code))
    if (counted >= n) {
      doneAt = Date.now()
      break
    }
    await Bun.sleep(50)
  }
  const published = JSON.parse((await publisher).stdout.trim().split('\n').at(-1)!) as { startedAt: number; published: number; seconds: number }
  if (!doneAt) doneAt = Date.now()
  // The relay copies every scan to the public SCANS stream one message each; it may trail analytics.
  const relaying = (product.env.SCAN_RELAY ?? Bun.env.SCAN_RELAY) !== '0'
  const relayed = relaying ? await scansInPublicStream(product.env.NATS_URL!, code, published.published, deadline) : undefined
  await Bun.sleep(1000)
  counted = await totalScans(product, key, code)
  const seconds = (doneAt - published.startedAt) / 1000
  const base = (metric: string) => ({ scenario, metric, order: 6 })
  const rows = [
    floorRow(base(`scans/s, publish → aggregates (${fmt.int(n)} scans)${relaying ? '' : ', SCAN_RELAY=0'}`), counted / seconds, TARGETS.ingestScansPerS, fmt.rps,
      `${fmt.rps(TARGETS.ingestScansPerS)} (target); published at ${fmt.rps(published.published / published.seconds)}`),
    countRow(base('scans counted vs published'), counted, published.published, 'published'),
  ]
  if (!relayed) return rows
  const relaySeconds = (relayed.at - published.startedAt) / 1000
  return [
    ...rows,
    floorRow(base('scans/s, publish → public SCANS stream (relay)'), relayed.scans / relaySeconds, undefined, fmt.rps, `all in SCANS ${relaySeconds.toFixed(1)} s after the first publish`),
    countRow(base('scans in SCANS vs published'), relayed.scans, published.published, 'published'),
  ]
}

/** Waits until SCANS holds `expected` messages on scans.<code> (or the deadline); how many, and when. */
async function scansInPublicStream(url: string, code: string, expected: number, deadline: number): Promise<{ scans: number; at: number }> {
  const nc = await connect({ servers: url })
  try {
    const jsm = await nc.jetstreamManager()
    let scans = 0
    while (Date.now() < deadline) {
      const info = await jsm.streams.info('SCANS', { subjects_filter: `scans.${code}` }).catch(() => undefined)
      scans = info?.state.subjects?.[`scans.${code}`] ?? 0
      if (scans >= expected) break
      await Bun.sleep(50)
    }
    return { scans, at: Date.now() }
  } finally {
    await nc.close()
  }
}

const T = (ms: number[]) => [...ms].sort((a, b) => a - b)
const median = (ms: number[]) => T(ms)[Math.floor(ms.length / 2)]!

/** Times `calls` GETs of `path` one after the other (after 3 unmeasured ones); the median and the slowest. */
async function timeCalls(product: Product, key: string, path: string, calls = 20) {
  const once = async () => {
    const started = performance.now()
    const response = await fetch(`${product.api}${path}`, { headers: { 'x-api-key': key } })
    const body = await response.text()
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${body.slice(0, 300)}`)
    return { ms: performance.now() - started, body }
  }
  for (let i = 0; i < 3; i++) await once()
  const times: number[] = []
  let body = ''
  for (let i = 0; i < calls; i++) ({ ms: times[i], body } = await once())
  return { median: median(times), max: Math.max(...times), body }
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/**
 * Scenarios 5 (scan export) and 7 (breakdown): a DATA_DIR with one code holding `settings.scans`
 * scans over 90 days (seeded through the analytics store's own applyScans), served by the
 * one-process product.
 */
export async function seededScansScenario(settings: Settings, log: (line: string) => void): Promise<Row[]> {
  const dataDir = newDataDir()
  const rows: Row[] = []
  try {
    const admin = adminIn(dataDir)
    const { account_id } = await admin('account', 'create', '--email', 'scans@bench.test', '--tier', 'pro')
    const { key } = await admin('key', 'create', '--account', account_id, '--scope', 'personal')
    await seed('dynamic', dataDir, `acct:${account_id}`, account_id, '1')
    const code = 'Bn000000000'
    const seeded = await seed('scans', dataDir, code, String(settings.scans), '90')
    log(`seeded ${fmt.int(settings.scans)} scans in ${seeded.seconds.toFixed(1)} s (${fmt.rps(settings.scans / seeded.seconds)})`)

    let product = await startOneProcess(dataDir)
    try {
      const all = await timeCalls(product, key, `/v1/dynqrcodes/${code}/analytics`)
      const total = (JSON.parse(all.body) as { total_scans: number }).total_scans
      if (total !== settings.scans) throw new Error(`breakdown reports ${total} scans, ${settings.scans} seeded`)
      const now = Date.now()
      const month = await timeCalls(product, key, `/v1/dynqrcodes/${code}/analytics?from=${isoDay(now - 29 * 86_400_000)}&to=${isoDay(now)}`)
      const base = (metric: string) => ({ scenario: '7 analytics breakdown, one process', metric, order: 7 })
      const { last30Days, allTime } = TARGETS.breakdownMs
      rows.push(
        ceilingRow(base(`all time, ${fmt.int(settings.scans)} scans: median of 20`), all.median, allTime, fmt.ms, `${fmt.ms(allTime)} (target); slowest ${fmt.ms(all.max)}`),
        ceilingRow(base('last 30 days: median of 20'), month.median, last30Days, fmt.ms, `${fmt.ms(last30Days)} (target); slowest ${fmt.ms(month.max)}`),
      )
    } finally {
      await product.stop()
    }
    // A fresh process for the export, so its peak RSS is the export's own.
    product = await startOneProcess(dataDir)
    try {
      const got = await download(product, `/v1/dynqrcodes/${code}/analytics/export`, key)
      log(`scan export of ${fmt.int(settings.scans)}: ${got.seconds.toFixed(2)} s, peak ${fmt.mb(got.hwm)}`)
      rows.push(...exportRows('5 CSV export, one process', 'scan export', settings.scans, got, TARGETS.scanExport))
    } finally {
      await product.stop()
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
  return rows
}
