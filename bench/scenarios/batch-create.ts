import type { Product } from '../product'
import { ceilingRow, fmt, type Row } from '../report'
import type { Settings } from '../settings'
import { measure } from '../wrk'
import { type ApiFixture, BATCH_BODY } from './api-fixture'

/**
 * Scenario 4: POST /v1/qrcodes/batch with 50 records from one client connection (wrk -c1), so the
 * percentiles are the latency of a batch, not of a queue. Baseline: bare Elysia answering the
 * same 201 body to the same request.
 */
export async function batchCreateScenario(product: Product, fixture: ApiFixture, settings: Settings, maxP50?: number): Promise<Row[]> {
  const scenario = `4 batch of 50, ${product.mode}`
  const run = { connections: 1, headers: { 'x-api-key': fixture.key }, post: { body: JSON.stringify(BATCH_BODY) } }
  const bare = await measure({ ...run, url: `${fixture.bare.url}/v1/qrcodes/batch` }, settings.seconds, settings.warmup)
  const batch = await measure({ ...run, url: `${product.api}/v1/qrcodes/batch` }, settings.seconds, settings.warmup)
  if (batch.bad > 0) throw new Error(`batch: ${batch.bad} of ${batch.requests} responses were not 2xx`)
  const base = (metric: string) => ({ scenario, metric, order: 4 })
  return [
    ceilingRow(base('p50, 1 connection'), batch.p50, maxP50, fmt.ms, `${fmt.ms(bare.p50)} bare Elysia${maxP50 ? `; target ${fmt.ms(maxP50)}` : ''}`),
    ceilingRow(base('p99, 1 connection'), batch.p99, undefined, fmt.ms, `${fmt.ms(bare.p99)} bare Elysia`),
    ceilingRow(base('batches/s, 1 connection'), batch.rps, undefined, fmt.rps, `${fmt.rps(bare.rps)} bare Elysia (${fmt.int(batch.rps * 50)} records/s)`),
  ]
}
