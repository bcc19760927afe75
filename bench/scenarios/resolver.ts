import { startBare302 } from '../baselines'
import { api, member, type Product } from '../product'
import { ceilingRow, countRow, fmt, type Row, shareRow } from '../report'
import type { Settings } from '../settings'
import { BROWSER_UA, measure, wrk, type WrkResult } from '../wrk'

export const DESTINATION = 'https://example.com/landing?utm_source=qr'

/** How a scenario finds out how many scans analytics counted for a code (absent: not checked). */
export type ScanCounter = (product: Product, key: string, code: string, atLeast: number) => Promise<number>

export interface ResolverOptions {
  order: 1 | 2
  scenario: string
  /** Share of bare throughput to reach. */
  minShare: number
  /** p99 ceiling in ms, when there is one. */
  maxP99Ms?: number
  countScans?: ScanCounter
  /**
   * Seconds from the end of the load until SCANS holds every scan (the relay's consumer has
   * nothing left), for the NATS deployment: the relay gives way to redirects (SCAN_RELAY_NICE),
   * so the row shows how far SCANS trailed the burst.
   */
  relayTrail?: (product: Product, loadEnded: number) => Promise<number>
}

const wrkNote = (r: WrkResult) => {
  const errors = Object.values(r.socketErrors).reduce((a, b) => a + b, 0)
  return r.bad || errors ? ` [${r.bad} non-3xx, ${errors} socket errors]` : ''
}

/**
 * Scenarios 1 and 2: 302s/s and p99 at `connections` connections on one hot code against a bare
 * Bun.serve answering the same 302. The warm-up hits a second code, so the measured code's scans
 * are exactly those of the measured run (plus requests wrk left in flight when it stopped).
 */
export async function resolverScenario(product: Product, settings: Settings, opts: ResolverOptions): Promise<Row[]> {
  const { key } = await member(product, 'resolver')
  const create = async (name: string) =>
    (await api(product, key, 'POST', '/v1/dynqrcodes', { destination_url: DESTINATION, name })).json.created[0].code as string
  const [warmCode, hotCode] = [await create('Warm-up'), await create('Hot')]
  const headers = { 'user-agent': BROWSER_UA }
  const run = { connections: settings.connections, headers }

  const bare = await startBare302(DESTINATION)
  let baseline: WrkResult
  try {
    baseline = await measure({ ...run, url: `${bare.url}/${hotCode}` }, settings.seconds, settings.warmup)
  } finally {
    await bare.stop()
  }
  if (settings.warmup > 0) await wrk({ ...run, url: `${product.short}/${warmCode}`, seconds: settings.warmup })
  const measured = await wrk({ ...run, url: `${product.short}/${hotCode}`, seconds: settings.seconds })
  // Watched from the load's end, beside the count below (which waits for a settled figure).
  const trailed = opts.relayTrail?.(product, performance.now())
  const served = measured.requests - measured.bad

  const base = (metric: string) => ({ scenario: opts.scenario, metric, order: opts.order })
  const rows: Row[] = [
    { ...shareRow(base(`redirects/s, ${settings.connections} conns`), measured.rps, baseline.rps, 'bare Bun.serve 302', opts.minShare), product: `${fmt.rps(measured.rps)}${wrkNote(measured)}` },
    ceilingRow(base('p99 latency'), measured.p99, opts.maxP99Ms, fmt.ms, `${fmt.ms(baseline.p99)} (bare)${opts.maxP99Ms ? `; target ${fmt.ms(opts.maxP99Ms)}` : ''}`),
    ceilingRow(base('p50 latency'), measured.p50, undefined, fmt.ms, `${fmt.ms(baseline.p50)} (bare)`),
  ]
  if (opts.countScans) {
    const counted = await opts.countScans(product, key, hotCode, served)
    rows.push(countRow(base('scans recorded vs 302s served'), counted, served, '302s completed', settings.connections))
  }
  if (trailed) rows.push(ceilingRow(base('SCANS complete, after the load'), await trailed, undefined, fmt.s, `the relay's copy of every scan (${settings.seconds} s load)`))
  return rows
}
