import { describe, expect, it } from 'bun:test'
import { STALE_VERSION } from '@lr/library-records'
import { etagOf } from '@lr/platform/etag'
import type { RecordStore } from '../src/ports'
import { failure, personal, setup, T0 } from './fixtures'

const valid = { url: 'https://example.com/menu', name: 'Menu' }

/** A store whose next `get` lets another writer change the record right after it was read (a hand-written wrapper). */
function racingStore(inner: RecordStore) {
  let race: (() => Promise<unknown>) | null = null
  const store: RecordStore = {
    ...inner,
    async get(library, id) {
      const read = await inner.get(library, id)
      const other = race
      race = null
      await other?.()
      return read
    },
  }
  return { store, raceNextRead: (write: () => Promise<unknown>) => void (race = write) }
}

async function withRecord() {
  const ctx = setup()
  const racing = racingStore(ctx.store)
  const { service } = setup({ store: racing.store, now: () => T0 + 60 })
  const [record] = (await service.create(personal, valid)).created
  return { service, record: record!, raceNextRead: racing.raceNextRead }
}

describe('versions (If-Match, no-op PATCH)', () => {
  it('writes nothing for a PATCH that changes nothing: updated_at and the list of changes stay', async () => {
    const ctx = setup()
    const [record] = (await ctx.service.create(personal, valid)).created
    ctx.tick(60)
    expect(await ctx.service.update(personal, record!.qr_id, { name: ' Menu ', url: valid.url, status: 'active', style: {} })).toEqual(record!)
    expect(await ctx.service.list(personal, { updated_since: String(T0 + 1) })).toEqual({ qrcodes: [], next_cursor: null })
  })

  it('refuses If-Match when the record changes between the read and the write, and keeps the other writer\'s change', async () => {
    const { service, record, raceNextRead } = await withRecord()
    raceNextRead(() => service.update(personal, record.qr_id, { name: 'Theirs' }))
    expect(await failure(service.update(personal, record.qr_id, { name: 'Mine' }, etagOf(record)))).toEqual({ code: 'precondition_failed', message: STALE_VERSION })
    expect((await service.get(personal, record.qr_id)).name).toBe('Theirs')
  })

  it('refuses an If-Match DELETE when the record changes between the read and the write, and keeps it', async () => {
    const { service, record, raceNextRead } = await withRecord()
    raceNextRead(() => service.update(personal, record.qr_id, { name: 'Theirs' }))
    expect((await failure(service.delete(personal, record.qr_id, etagOf(record)))).code).toBe('precondition_failed')
    expect((await service.get(personal, record.qr_id)).name).toBe('Theirs')
  })

  it('without If-Match, applies its PATCH over a change made between the read and the write', async () => {
    const { service, record, raceNextRead } = await withRecord()
    raceNextRead(() => service.update(personal, record.qr_id, { style: { theirs: true } }))
    expect(await service.update(personal, record.qr_id, { name: 'Mine' })).toMatchObject({ name: 'Mine', style: { theirs: true } })
  })
})
