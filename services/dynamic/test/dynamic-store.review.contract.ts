import { expect, it } from 'bun:test'
import { ReceiptTaken } from '@lr/proto'
import type { DynamicStore, StoredDynamic } from '../src/ports'
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

  it('stores a receipt with a change, all or nothing: a live receipt of the same key refuses the next change (ReceiptTaken) and leaves the record', async () => {
    await store().insertMany(A, [record(1, { pending_change: pending })])
    const code = record(1).code
    const at = Math.floor(Date.now() / 1000)
    const receiptOf = (answer: string) => (updated: StoredDynamic) =>
      ({ scope: 'key_1', key: 'idem-r', fingerprint: 'f', response: { answer, destination_url: updated.destination_url, pending: updated.pending_change ?? null }, created_at: at })
    const updated = await store().update(A, code, { destination_url: pending.destination_url, pending_change: null }, 1_800_000_001, (await store().get(A, code))!.rev, receiptOf('first'))
    // Nothing of the receipt shows in the record.
    expect(updated).toEqual(record(1, { destination_url: pending.destination_url, updated_at: 1_800_000_001 }))
    expect((await store().get(A, code))?.record).toEqual(updated!)
    const first = { scope: 'key_1', key: 'idem-r', fingerprint: 'f', response: { answer: 'first', destination_url: pending.destination_url, pending: null }, created_at: at }
    expect(await store().findReceipt('key_1', 'idem-r', at - 10)).toEqual(first)
    const twin = store().update(A, code, { name: 'Twin' }, 1_800_000_002, (await store().get(A, code))!.rev, receiptOf('second'))
    expect(await twin.catch((e) => e)).toBeInstanceOf(ReceiptTaken)
    expect((await store().get(A, code))?.record).toEqual(updated!)
    expect(await store().findReceipt('key_1', 'idem-r', at - 10)).toEqual(first)
  })

  it('stores no receipt when a change with one finds the record changed meanwhile (compare-and-set)', async () => {
    await store().insertMany(A, [record(1, { pending_change: pending })])
    const code = record(1).code
    const { rev } = (await store().get(A, code))!
    await store().update(A, code, { name: 'Meanwhile' }, 1_800_000_001)
    const at = Math.floor(Date.now() / 1000)
    const receipt = { scope: 'key_1', key: 'idem-cas', fingerprint: 'f', response: {}, created_at: at }
    expect(await store().update(A, code, { pending_change: null }, 1_800_000_002, rev, () => receipt)).toBeNull()
    expect(await store().findReceipt('key_1', 'idem-cas', at - 10)).toBeNull()
    expect((await store().get(A, code))?.record.pending_change).toEqual(pending)
  })
}
