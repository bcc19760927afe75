import type { Product } from '../product'
import { ceilingRow, fmt, type Row, shareRow } from '../report'
import type { Settings } from '../settings'
import { measure } from '../wrk'
import { type ApiFixture, CREATE_BODY } from './api-fixture'

/**
 * Scenario 3: authenticated list (GET /v1/dynqrcodes?limit=100) and single create through the
 * gateway, against bare Elysia routes answering the same JSON; each pair back to back.
 */
export async function apiReadCreateScenario(product: Product, fixture: ApiFixture, settings: Settings, minShare: { list: number; create: number }): Promise<Row[]> {
  const scenario = `3 API, ${product.mode}`
  const run = { connections: settings.connections, headers: { 'x-api-key': fixture.key } }
  const listPath = '/v1/dynqrcodes?limit=100'
  const create = { body: JSON.stringify(CREATE_BODY) }

  const bareList = await measure({ ...run, url: `${fixture.bare.url}${listPath}` }, settings.seconds, settings.warmup)
  const list = await measure({ ...run, url: `${product.api}${listPath}` }, settings.seconds, settings.warmup)
  const bareCreate = await measure({ ...run, url: `${fixture.bare.url}/v1/dynqrcodes`, post: create }, settings.seconds, settings.warmup)
  const created = await measure({ ...run, url: `${product.api}/v1/dynqrcodes`, post: create }, settings.seconds, settings.warmup)
  for (const [what, r] of [['list', list], ['create', created]] as const)
    if (r.bad > 0) throw new Error(`${what}: ${r.bad} of ${r.requests} responses were not 2xx/3xx`)

  const base = (metric: string) => ({ scenario, metric, order: 3 })
  return [
    shareRow(base(`GET list limit=100: req/s, ${settings.connections} conns`), list.rps, bareList.rps, 'bare Elysia', minShare.list),
    ceilingRow(base('GET list: p50 / p99'), list.p99, undefined, fmt.ms, `${fmt.ms(bareList.p50)} / ${fmt.ms(bareList.p99)} (bare)`),
    shareRow(base(`POST create: req/s, ${settings.connections} conns`), created.rps, bareCreate.rps, 'bare Elysia', minShare.create),
    ceilingRow(base('POST create: p50 / p99'), created.p99, undefined, fmt.ms, `${fmt.ms(bareCreate.p50)} / ${fmt.ms(bareCreate.p99)} (bare)`),
  ].map((row, i) => (i % 2 === 1 ? { ...row, product: `${fmt.ms(i === 1 ? list.p50 : created.p50)} / ${row.product}` } : row))
}
