import type { StoreFixture } from '@lr/library-records/testing/store-contract'
import type { StoredDynamic } from '../src/ports'

export { A, B } from '@lr/library-records/testing/store-contract'

/** A deterministic dynamic record numbered `n` (code `code0001`, ...). */
export const record = (n: number, over: Partial<StoredDynamic> = {}): StoredDynamic => ({
  code: `code${n.toString().padStart(4, '0')}`,
  destination_url: `https://example.com/${n}`,
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
export const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => record(from + i))

/** Dynamic records for the shared store contract: soft deletes. */
export const dynamicFixture: StoreFixture<StoredDynamic> = { idField: 'code', urlField: 'destination_url', record }
