import { expect, it } from 'bun:test'
import type { DynamicStore } from '../src/ports'
import { A, record } from './dynamic-store.fixtures'

const LIMITS = { expires_at: 1_900_000_000, max_scans: 5, fallback_url: 'https://example.com/over' }

/** expires_at, max_scans and fallback_url (README "Expiring and capped codes"): stored, patched, cleared, resolved. */
export function expiryContract(current: () => DynamicStore) {
  it('keeps the fields a record is inserted with, and none for a record without them', async () => {
    await current().insertMany(A, [record(1, LIMITS), record(2)])
    expect((await current().get(A, record(1).code))?.record).toEqual(record(1, LIMITS))
    const plain = (await current().get(A, record(2).code))?.record
    expect(plain).toEqual(record(2))
    expect(Object.keys(plain!)).not.toContain('expires_at')
  })

  it('sets the fields by update, and clears each with null while keeping the others', async () => {
    await current().insertMany(A, [record(1)])
    expect(await current().update(A, record(1).code, LIMITS, 1_800_000_000)).toEqual(record(1, { ...LIMITS, updated_at: 1_800_000_000 }))
    const cleared = await current().update(A, record(1).code, { max_scans: null, fallback_url: null }, 1_800_000_001)
    expect(cleared).toEqual(record(1, { expires_at: LIMITS.expires_at, updated_at: 1_800_000_001 }))
    expect((await current().get(A, record(1).code))?.record).toEqual(cleared!)
  })

  it('resolves a code with the fields that are set, and without those that are not', async () => {
    await current().insertMany(A, [record(1, LIMITS), record(2, { max_scans: 1 }), record(3)])
    expect(await current().resolve(record(1).code)).toEqual({ code: record(1).code, destination_url: record(1).destination_url, status: 'active', deleted: false, ...LIMITS })
    expect(await current().resolve(record(2).code)).toEqual({ code: record(2).code, destination_url: record(2).destination_url, status: 'active', deleted: false, max_scans: 1 })
    expect(await current().resolve(record(3).code)).toEqual({ code: record(3).code, destination_url: record(3).destination_url, status: 'active', deleted: false })
  })
}
