import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { type Bus } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { type ExportChunk, RECORDS_SUBJECTS as S, type StaticRecord } from '@lr/proto'
import { serveRecords } from '../src/handlers'
import { failure, otherPersonal, personal, setup, T0 } from './fixtures'

let bus: Bus
let stop: () => void
let ctx: ReturnType<typeof setup>
beforeEach(() => {
  bus = createLocalBus()
  ctx = setup()
  stop = serveRecords(bus, ctx.service)
})
afterEach(async () => {
  stop()
  await bus.close()
  ctx.close()
})

const create = async (name = 'Menu') =>
  (await bus.request<{ created: StaticRecord[] }>(S.create, { principal: personal, body: { url: 'https://example.com/', name } })).created[0]!

describe('records handlers over the bus', () => {
  it('creates, gets, lists, updates and deletes a record', async () => {
    const record = await create()
    expect(record).toMatchObject({ name: 'Menu', status: 'active', team_id: null, created_at: T0 })
    expect(await bus.request(S.get, { principal: personal, id: record.qr_id })).toEqual(record)
    expect(await bus.request(S.list, { principal: personal, query: {} })).toEqual({ qrcodes: [record], next_cursor: null })
    const updated = await bus.request(S.update, { principal: personal, id: record.qr_id, body: { name: 'Lunch' } })
    expect(updated).toEqual({ ...record, name: 'Lunch' })
    expect(await bus.request(S.delete, { principal: personal, id: record.qr_id })).toEqual({ deleted: record.qr_id })
  })

  it('creates a batch and carries every item error back to the caller', async () => {
    const ok = await bus.request<{ created: StaticRecord[] }>(S.batch, { principal: personal, body: { qrcodes: [{ url: 'https://a.example/', name: 'a' }] } })
    expect(ok.created).toHaveLength(1)
    const bad = { qrcodes: [{ url: 'x', name: 'a' }, { url: 'https://a.example/', name: '' }] }
    expect(await failure(bus.request(S.batch, { principal: personal, body: bad }))).toEqual({
      code: 'batch_invalid',
      message: 'one or more items are invalid',
      details: { items: [{ index: 0, error: 'url must be an absolute http or https URL' }, { index: 1, error: 'name must be 1 to 200 characters after trimming' }] },
    })
  })

  it('answers an export chunk', async () => {
    const record = await create()
    const chunk = await bus.request<ExportChunk>(S.export, { principal: personal, cursor: null })
    expect(chunk).toEqual({
      csv: `qr_id,name,url,status,team_id,created_by,style,created_at,updated_at,tags\r\n${record.qr_id},Menu,https://example.com/,active,,acct_a,{},${T0},${T0},\r\n`,
      next_cursor: null,
    })
  })

  it('answers not_found for another library\'s record', async () => {
    const record = await create()
    expect(await failure(bus.request(S.get, { principal: otherPersonal, id: record.qr_id })))
      .toEqual({ code: 'not_found', message: `no QR code "${record.qr_id}" in this library` })
  })

  it('answers bad_request to an envelope without a principal', async () => {
    expect(await failure(bus.request(S.create, { body: { url: 'https://example.com/', name: 'x' } })))
      .toEqual({ code: 'bad_request', message: 'malformed request at /principal: Expected required property' })
  })

  it('answers bad_request to a principal with an unknown role', async () => {
    const principal = { ...personal, role: 'viewer' }
    expect(await failure(bus.request(S.list, { principal, query: {} })))
      .toEqual({ code: 'bad_request', message: 'malformed request at /principal/role: Expected union value' })
  })

  it('answers bad_request to an update whose id is not a string', async () => {
    expect(await failure(bus.request(S.update, { principal: personal, id: 7, body: { name: 'x' } })))
      .toEqual({ code: 'bad_request', message: 'malformed request at /id: Expected string' })
  })

  it('stops answering once unsubscribed', async () => {
    stop()
    expect(await failure(bus.request(S.get, { principal: personal, id: 'qr_x' })))
      .toEqual({ code: 'unavailable', message: `no service answers ${S.get}` })
  })
})
