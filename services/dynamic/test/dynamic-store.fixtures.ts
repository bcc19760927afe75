import type { StoredDynamic } from '../src/ports'

/** Owners and records shared by the DynamicStore contract files. */
export const A = 'acct:a'
export const B = 'team:b'

export const record = (n: number, over: Partial<StoredDynamic> = {}): StoredDynamic => ({
  code: `code${n.toString().padStart(4, '0')}`,
  destination_url: `https://example.com/${n}`,
  name: `Code ${n}`,
  style: {},
  status: 'active',
  team_id: null,
  created_by: 'acct_a',
  created_at: 1_700_000_000 + n,
  updated_at: 1_700_000_000 + n,
  ...over,
})
export const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => record(from + i))
export const codes = (records: StoredDynamic[]) => records.map((r) => r.code)
