import type { StaticRecord } from '@lr/proto'

/** Two libraries and deterministic records for the RecordStore contract. */
export const A = 'acct:a'
export const B = 'team:b'

export const record = (n: number, over: Partial<StaticRecord> = {}): StaticRecord => ({
  qr_id: `qr_${n.toString().padStart(4, '0')}`,
  url: `https://example.com/${n}`,
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
export const ids = (records: StaticRecord[]) => records.map((r) => r.qr_id)
