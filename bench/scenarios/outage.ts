import { waitUntil } from '../../test/harness/ports'
import { api, member, type Product } from '../product'
import { ceilingRow, countRow, fmt, type Row } from '../report'
import { sampleRss } from '../rss'
import type { Settings } from '../settings'
import { BROWSER_UA, wrk } from '../wrk'
import { DESTINATION } from './resolver'
import { settledCount, totalScans } from './scans'

/**
 * Scenario 8: NATS goes away for `outageSeconds` while the resolver serves one cached code at
 * full rate, then comes back. Every 302 must be counted in the end (the resolver holds its scans
 * in a bounded buffer and then its spool on disk), and the resolver's memory must stay bounded:
 * its peak is reported beside its size before the outage.
 */
export async function outageScenario(product: Product, settings: Settings): Promise<Row[]> {
  if (!product.nats || !product.resolverPid) throw new Error('the outage scenario needs the NATS deployment')
  const { key } = await member(product, 'outage')
  const code = (await api(product, key, 'POST', '/v1/dynqrcodes', { destination_url: DESTINATION, name: 'Outage' })).json.created[0].code as string
  const headers = { 'user-agent': BROWSER_UA }
  // Cached by the resolver before the broker goes (an uncached code needs the dynamic service).
  await wrk({ connections: 4, headers, url: `${product.short}/${code}`, seconds: 1 })
  const warm = await settledCount(product, key, code)

  const rss = sampleRss(product.resolverPid, 100)
  const outage = settings.outageSeconds
  const load = wrk({ connections: settings.connections, headers, url: `${product.short}/${code}`, seconds: outage + 4 })
  await Bun.sleep(2000)
  await product.nats.down()
  await Bun.sleep(outage * 1000)
  await product.nats.up()
  const measured = await load
  const memory = rss.stop()
  const served = measured.requests - measured.bad

  await waitUntil(async () => (await totalScans(product, key, code)) >= warm + served, 300_000, 'every scan of the outage to be counted').catch(() => undefined)
  const counted = await settledCount(product, key, code)
  // The resolver logs each drop with the running total (platform/src/scan-stream-publisher.ts).
  const dropped = Math.max(0, ...[...product.output().matchAll(/"dropped_total":(\d+)/g)].map((m) => Number(m[1])))

  const base = (metric: string) => ({ scenario: '8 resolver through a NATS outage', metric, order: 8 })
  return [
    { ...countRow(base(`scans counted vs 302s served, NATS away ${outage} s`), counted - warm, served, '302s completed', settings.connections), product: `${fmt.int(counted - warm)} counted (${fmt.rps(measured.rps)} during the run; ${fmt.int(dropped)} dropped by the resolver)` },
    ceilingRow(base('resolver peak RSS through the outage'), memory.hwm, undefined, fmt.mb, `${fmt.mb(memory.start)} before the outage`),
  ]
}
