import { afterEach, describe, expect, it } from 'bun:test'
import type { RecordEvent } from '@lr/proto'
import { personal, setup, T0, writer } from './fixtures'

// Record events (webhooks, docs/decisions.md §11): one per record written, after the write.
describe('records service: record events', () => {
  const events: RecordEvent[] = []
  let h: ReturnType<typeof setup>
  const start = (sink: (e: RecordEvent) => Promise<void> = async (e) => void events.push(e)) => (h = setup({ events: sink }))
  afterEach(() => {
    events.length = 0
    h?.close()
  })

  it('emits record.created per record of a batch, record.updated and record.deleted with the tombstone, each with its library and kind', async () => {
    start()
    const { created } = await h.service.batch(writer, { qrcodes: [{ url: 'https://a.example', name: 'a' }, { url: 'https://b.example', name: 'b' }] })
    h.tick(5)
    const updated = await h.service.update(writer, created[0]!.qr_id, { name: 'a2' })
    h.tick(5)
    await h.service.delete(writer, created[1]!.qr_id)
    expect(events.map((e) => [e.type, e.library])).toEqual([
      ['record.created', 'team:team_1'], ['record.created', 'team:team_1'], ['record.updated', 'team:team_1'], ['record.deleted', 'team:team_1'],
    ])
    expect(events.map((e) => e.data)).toEqual([
      { kind: 'static', ...created[0] }, { kind: 'static', ...created[1] }, { kind: 'static', ...updated },
      { kind: 'static', qr_id: created[1]!.qr_id, deleted_at: T0 + 10, updated_at: T0 + 10 },
    ])
    expect(new Set(events.map((e) => e.id)).size).toBe(4)
    expect(events.every((e) => e.id.startsWith('evt_') && !Number.isNaN(Date.parse(e.timestamp)))).toBe(true)
  })

  it('emits nothing for a PATCH that changes nothing, nor for a refused write', async () => {
    start()
    const { created } = await h.service.create(personal, { url: 'https://a.example', name: 'a' })
    await h.service.update(personal, created[0]!.qr_id, { name: 'a' })
    await h.service.update(personal, created[0]!.qr_id, { url: 'ftp://nope' }).catch(() => undefined)
    expect(events.map((e) => e.type)).toEqual(['record.created'])
  })

  it('keeps the write and its answer when the sink fails', async () => {
    start(async () => {
      throw new Error('webhooks away')
    })
    const { created } = await h.service.create(personal, { url: 'https://a.example', name: 'a' })
    expect(await h.service.get(personal, created[0]!.qr_id)).toEqual(created[0]!)
  })
})
