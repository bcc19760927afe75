import type { StoreFixture } from '@lr/library-records/testing/store-contract'
import type { StaticRecord } from '@lr/proto'

export { A, B } from '@lr/library-records/testing/store-contract'

/** A deterministic static record numbered `n`. */
export const record = (n: number, over: Partial<StaticRecord> = {}): StaticRecord => ({
  qr_id: `qr_${n.toString().padStart(4, '0')}`,
  url: `https://example.com/${n}`,
  name: `Code ${n}`,
  style: {},
  tags: [],
  status: 'active',
  team_id: null,
  created_by: 'acct_a',
  created_at: 1_700_000_000 + n,
  updated_at: 1_700_000_000 + n,
  ...over,
})

/** Static records for the shared store contract. */
export const staticFixture: StoreFixture<StaticRecord> = { idField: 'qr_id', urlField: 'url', record }
