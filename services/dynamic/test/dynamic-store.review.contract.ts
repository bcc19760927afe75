import { expect, it } from 'bun:test'
import type { DynamicStore } from '../src/ports'
import { A, record } from './dynamic-store.fixtures'

const IOS = [{ os: 'ios' as const, destination_url: 'https://apps.example/ios' }]
const pending = { destination_url: 'https://example.com/next', redirect_rules: IOS, requested_by: 'acct_w', requested_at: 1_800_000_000 }

/** redirect_rules and pending_change (docs/decisions.md, "Reviewed edits and device rules"): stored, cleared, filtered, resolved. */
export function reviewContract(store: () => DynamicStore) {
  it('stores redirect_rules and pending_change, and reads a record without them with neither key', async () => {
    await store().insertMany(A, [record(1, { redirect_rules: IOS, pending_change: pending }), record(2)])
    expect((await store().get(A, record(1).code))?.record).toEqual(record(1, { redirect_rules: IOS, pending_change: pending }))
    const plain = (await store().get(A, record(2).code))!.record
    expect(plain).toEqual(record(2))
    expect(['redirect_rules' in plain, 'pending_change' in plain]).toEqual([false, false])
  })

  it('sets pending_change and redirect_rules by update, clears pending_change with null, and keeps fields a patch leaves out', async () => {
    await store().insertMany(A, [record(1, { redirect_rules: IOS })])
    const set = await store().update(A, record(1).code, { pending_change: pending }, 1_800_000_001)
    expect(set).toEqual(record(1, { redirect_rules: IOS, pending_change: pending, updated_at: 1_800_000_001 }))
    const cleared = await store().update(A, record(1).code, { destination_url: 'https://example.com/next', redirect_rules: [], pending_change: null }, 1_800_000_002)
    expect(cleared).toEqual(record(1, { destination_url: 'https://example.com/next', redirect_rules: [], updated_at: 1_800_000_002 }))
    expect('pending_change' in cleared!).toBe(false)
  })

  it('lists and lists changes by pending: true only records with a pending change, false only those without', async () => {
    await store().insertMany(A, [record(1), record(2), record(3)])
    await store().update(A, record(2).code, { pending_change: pending }, 1_800_000_001)
    const codes = (page: { items: object[] }) => page.items.map((r) => (r as { code: string }).code)
    expect(codes(await store().list(A, { limit: 10, pending: true }))).toEqual([record(2).code])
    expect(codes(await store().list(A, { limit: 10, pending: false }))).toEqual([record(1).code, record(3).code])
    expect(codes(await store().changes(A, { limit: 10, pending: true }))).toEqual([record(2).code])
    expect(codes(await store().changes(A, { limit: 10, pending: false, includeDeleted: true }))).toEqual([record(1).code, record(3).code])
  })

  it('combines pending with the tag, search and sort filters of the list', async () => {
    await store().insertMany(A, [record(1, { tags: ['print'], name: 'bravo' }), record(2, { tags: ['print'], name: 'alpha' }), record(3, { tags: ['web'], name: 'zulu' })])
    for (const n of [1, 2, 3]) await store().update(A, record(n).code, { pending_change: pending }, 1_800_000_001)
    await store().update(A, record(1).code, { pending_change: null }, 1_800_000_002)
    const codes = (page: { items: object[] }) => page.items.map((r) => (r as { code: string }).code)
    expect(codes(await store().list(A, { limit: 10, pending: true, tags: ['print'] }))).toEqual([record(2).code])
    expect(codes(await store().list(A, { limit: 10, pending: true, sort: 'name' }))).toEqual([record(2).code, record(3).code])
    expect(codes(await store().list(A, { limit: 10, pending: false, search: 'brav', sort: '-updated_at' }))).toEqual([record(1).code])
    expect(codes(await store().list(A, { limit: 10, pending: true, search: 'zul' }))).toEqual([record(3).code])
  })

  it('resolves a code with its approved rules only, and without redirect_rules when it has none', async () => {
    await store().insertMany(A, [record(1, { redirect_rules: IOS }), record(2, { pending_change: pending })])
    expect(await store().resolve(record(1).code)).toEqual({ code: record(1).code, destination_url: record(1).destination_url, status: 'active', deleted: false, redirect_rules: IOS })
    expect(await store().resolve(record(2).code)).toEqual({ code: record(2).code, destination_url: record(2).destination_url, status: 'active', deleted: false })
  })
}
