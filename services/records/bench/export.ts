// Measures the records service's CSV export end to end over SQLite (no bus, no HTTP):
// bun run services/records/bench/export.ts [rows]
import type { Principal } from '@lr/proto'
import { openSqlite } from '@lr/platform/sqlite'
import type { StaticRecord } from '@lr/proto'
import { createSqliteRecordStore } from '../src/adapters/record-store.sqlite'
import { createRecordsService } from '../src/service'

const total = Number(process.argv[2] ?? 200_000)
const principal: Principal = { account_id: 'acct_a', key_id: 'k', scope: 'business', team_id: 'team_1', role: 'admin' }
const db = openSqlite(':memory:')
const store = createSqliteRecordStore(db)
const row = (n: number): StaticRecord => ({
  qr_id: `qr_${n.toString(36).padStart(21, '0')}`, url: `https://example.com/products/${n}?utm_source=qr`, name: `Product, "${n}"`,
  style: { color: '#112233', dots: 'rounded' }, tags: [], status: 'draft', team_id: 'team_1', created_by: 'acct_a', created_at: 1_700_000_000, updated_at: 1_700_000_000,
})
for (let n = 0; n < total; n += 5000) await store.insertMany('team:team_1', Array.from({ length: Math.min(5000, total - n) }, (_, i) => row(n + i)))

const service = createRecordsService({ store, now: () => 0 })
for (let run = 1; run <= 3; run++) {
  const started = performance.now()
  let cursor: string | null = null
  let bytes = 0
  do {
    const chunk = await service.exportPage(principal, cursor)
    bytes += chunk.csv.length
    cursor = chunk.next_cursor
  } while (cursor)
  const seconds = (performance.now() - started) / 1000
  const rss = Math.round(process.memoryUsage().rss / 1e6)
  console.log(`run ${run}: ${total} rows in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} rows/s, ${(bytes / 1e6).toFixed(1)} MB of CSV, rss ${rss} MB`)
}
db.close()
