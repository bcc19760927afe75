import { describe, expect, it } from 'bun:test'
import { dynamicKind } from '../src/kind'
import type { StoredDynamic } from '../src/ports'

const kind = dynamicKind({ shortBaseUrl: 'https://s.example', newCode: () => 'Unused01' })
const stored = (over: Partial<StoredDynamic> = {}): StoredDynamic => ({
  code: 'Ab12Cd34', destination_url: 'https://example.com/', name: 'Menu', style: {}, tags: ['a'], status: 'active',
  team_id: null, created_by: 'acct_1', created_at: 1, updated_at: 2, ...over,
})

describe('a dynamic record as answered', () => {
  it('starts with code and short_url, keeps the stored fields in their order, and leaves the kind\'s unset fields out', () => {
    const record = kind.present(stored({ redirect_rules: [], pending_change: null, expires_at: null, max_scans: null, fallback_url: null }))
    expect(Object.keys(record)).toEqual(['code', 'short_url', 'destination_url', 'name', 'style', 'tags', 'status', 'team_id', 'created_by', 'created_at', 'updated_at'])
    expect(record.short_url).toBe('https://s.example/Ab12Cd34')
  })

  it('adds the kind\'s fields that are set, after the shared ones', () => {
    const rules = [{ os: 'ios' as const, destination_url: 'https://apps.apple.com/x' }]
    const pending = { destination_url: 'https://example.com/next', requested_by: 'acct_2', requested_at: 3 }
    const record = kind.present(stored({ redirect_rules: rules, pending_change: pending as StoredDynamic['pending_change'], expires_at: 9, max_scans: 5, fallback_url: 'https://example.com/over' }))
    expect(Object.keys(record).slice(-5)).toEqual(['redirect_rules', 'pending_change', 'expires_at', 'max_scans', 'fallback_url'])
    expect(record).toMatchObject({ redirect_rules: rules, pending_change: pending, expires_at: 9, max_scans: 5, fallback_url: 'https://example.com/over' })
  })
})
