// Seeding process: writes rows straight into a DATA_DIR's SQLite files through the stores' own
// adapters (one transaction per 10 000 rows), before the product opens that DATA_DIR.
//   bun run bench/seed.ts static  DATA_DIR LIBRARY ACCOUNT_ID COUNT
//   bun run bench/seed.ts dynamic DATA_DIR LIBRARY ACCOUNT_ID COUNT
//   bun run bench/seed.ts scans   DATA_DIR CODE COUNT [DAYS]
// Prints one JSON line: {"kind", "rows", "seconds"}.
import { join } from 'node:path'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteRecordStore } from '@lr/records'
import { createSqliteDynamicStore } from '@lr/dynamic'

const [kind, dataDir, ...rest] = process.argv.slice(2)
const BATCH = 10_000
const T0 = 1_700_000_000
const started = performance.now()

async function seedStatic(library: string, accountId: string, count: number) {
  const db = openSqlite(join(dataDir!, 'records.sqlite'))
  const store = createSqliteRecordStore(db)
  for (let n = 0; n < count; n += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, count - n) }, (_, i) => {
      const k = n + i
      return {
        qr_id: `qr_bench${k.toString(36).padStart(13, '0')}`, url: `https://example.com/products/${k}?utm_source=qr&utm_medium=print`,
        name: `Product, "${k}"`, style: { fg: '#112233', bg: '#ffffff', dots: 'rounded' }, tags: [], status: 'active' as const,
        team_id: null, created_by: accountId, created_at: T0 + k, updated_at: T0 + k,
      }
    })
    await store.insertMany(library, rows)
  }
  db.close()
}

async function seedDynamic(library: string, accountId: string, count: number) {
  const db = openSqlite(join(dataDir!, 'dynamic.sqlite'))
  const store = createSqliteDynamicStore(db)
  for (let n = 0; n < count; n += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, count - n) }, (_, i) => {
      const k = n + i
      return {
        code: `Bn${k.toString(36).padStart(9, '0')}`, destination_url: `https://example.com/landing/${k}?utm_source=qr`,
        name: `Campaign, "${k}"`, style: { fg: '#112233', dots: 'rounded' }, tags: [], status: 'active' as const,
        team_id: null, created_by: accountId, created_at: T0 + k, updated_at: T0 + k,
      }
    })
    await store.insertMany(library, rows)
  }
  db.close()
}

const COUNTRIES = ['DE', 'US', 'FR', 'GB', 'NL', 'ES', 'IT', 'PL', 'SE', 'unknown']
const AGENTS = [
  { device: 'mobile', os: 'iOS', browser: 'Mobile Safari' },
  { device: 'mobile', os: 'Android', browser: 'Chrome Mobile' },
  { device: 'tablet', os: 'iOS', browser: 'Mobile Safari' },
  { device: 'desktop', os: 'Windows', browser: 'Chrome' },
  { device: 'desktop', os: 'Mac OS', browser: 'Safari' },
  { device: 'desktop', os: 'Linux', browser: 'Firefox' },
]

/** `count` scans of one code spread over `days` days up to now, 10 countries, 6 agents, ~count/20 visitors. */
async function seedScans(code: string, count: number, days: number) {
  const { createSqliteAnalyticsStore } = await import('@lr/analytics')
  const db = openSqlite(join(dataDir!, 'analytics.sqlite'))
  const store = createSqliteAnalyticsStore(db)
  const end = Date.now() - 60_000
  const span = days * 86_400_000
  const visitors = Math.max(100, Math.floor(count / 20))
  let seed = 42
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648)
  for (let n = 0; n < count; n += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, count - n) }, (_, i) => {
      const k = n + i
      const agent = AGENTS[Math.floor(random() * AGENTS.length)]!
      return {
        scan_id: `bench-${code}-${k.toString(36).padStart(8, '0')}`, code,
        // In time order, as scans arrive: oldest first.
        scanned_at: end - span + Math.floor((k / count) * span),
        country: COUNTRIES[Math.floor(random() * COUNTRIES.length)]!, ...agent,
        visitor_id: Math.floor(random() * visitors).toString(16).padStart(64, '0'),
      }
    })
    const fresh = await store.applyScans(rows)
    if (fresh !== rows.length) throw new Error(`applyScans stored ${fresh} of ${rows.length}`)
  }
  db.close()
}

let rows = 0
if (kind === 'static' || kind === 'dynamic') {
  const [library, accountId, count] = rest
  rows = Number(count)
  await (kind === 'static' ? seedStatic : seedDynamic)(library!, accountId!, rows)
} else if (kind === 'scans') {
  const [code, count, days] = rest
  rows = Number(count)
  await seedScans(code!, rows, Number(days ?? 90))
} else {
  console.error(`unknown kind ${kind}`)
  process.exit(2)
}
console.log(JSON.stringify({ kind, rows, seconds: (performance.now() - started) / 1000 }))
