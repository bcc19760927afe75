import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Baseline, startBareElysia } from '../baselines'
import { api, member, type Product } from '../product'

export const CREATE_BODY = { destination_url: 'https://example.com/menu?table=12', name: 'Menu', style: { fg: '#112233' } }
export const BATCH_BODY = {
  qrcodes: Array.from({ length: 50 }, (_, i) => ({ url: `https://example.com/products/${i}?utm_source=qr`, name: `Product ${i}`, style: { fg: '#000', dots: 'rounded' } })),
}

/** A library with 100 dynamic codes, its key, and a bare Elysia answering the bodies the product answered. */
export interface ApiFixture {
  key: string
  bare: Baseline
  stop(): Promise<void>
}

export async function apiFixture(product: Product): Promise<ApiFixture> {
  const { key } = await member(product, 'api')
  for (let batch = 0; batch < 2; batch++) {
    const items = Array.from({ length: 50 }, (_, i) => ({ destination_url: `https://example.com/d/${batch * 50 + i}`, name: `Code ${batch * 50 + i}`, style: { fg: '#000' } }))
    await api(product, key, 'POST', '/v1/dynqrcodes/batch', items)
  }
  const list = (await api(product, key, 'GET', '/v1/dynqrcodes?limit=100')).json
  if (list.dynqrcodes.length !== 100) throw new Error(`expected 100 codes in the list, got ${list.dynqrcodes.length}`)
  const create = (await api(product, key, 'POST', '/v1/dynqrcodes', CREATE_BODY)).json
  const batch = (await api(product, key, 'POST', '/v1/qrcodes/batch', BATCH_BODY)).json
  const dir = mkdtempSync(join(tmpdir(), 'lr-bench-bodies-'))
  const file = join(dir, 'bodies.json')
  writeFileSync(file, JSON.stringify({ list, create, batch }))
  const bare = await startBareElysia(file)
  return {
    key,
    bare,
    async stop() {
      await bare.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
