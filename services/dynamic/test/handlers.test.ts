import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { type Bus } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { DYNAMIC_SUBJECTS as S, type DynamicRecord } from '@lr/proto'
import type { ExportChunk } from '@lr/proto'
import { serveDynamic } from '../src/handlers'
import { failure, notFound, otherPersonal, personal, setup, SHORT, T0 } from './fixtures'

let bus: Bus
let stop: () => void
let ctx: ReturnType<typeof setup>
beforeEach(() => {
  bus = createLocalBus()
  ctx = setup()
  stop = serveDynamic(bus, ctx.service)
})
afterEach(async () => {
  stop()
  await bus.close()
  ctx.close()
})

const create = async (name = 'Menu') =>
  (await bus.request<{ created: DynamicRecord[] }>(S.create, { principal: personal, body: { destination_url: 'https://example.com/', name } })).created[0]!

describe('dynamic handlers over the bus', () => {
  it('creates, gets, lists, updates and deletes a code', async () => {
    const record = await create()
    expect(record).toMatchObject({ name: 'Menu', status: 'active', team_id: null, created_at: T0, short_url: `${SHORT}/${record.code}` })
    expect(await bus.request(S.get, { principal: personal, id: record.code })).toEqual(record)
    expect(await bus.request(S.list, { principal: personal, query: { status: 'active' } })).toEqual({ dynqrcodes: [record], next_cursor: null })
    const updated = await bus.request(S.update, { principal: personal, id: record.code, body: { destination_url: 'https://new.example/' } })
    expect(updated).toEqual({ ...record, destination_url: 'https://new.example/' })
    expect(await bus.request(S.delete, { principal: personal, id: record.code })).toEqual({ deleted: record.code })
  })

  it('creates a batch from a bare array and carries every item error back to the caller', async () => {
    const ok = await bus.request<{ created: DynamicRecord[] }>(S.batch, { principal: personal, body: [{ destination_url: 'https://a.example/', name: 'a' }] })
    expect(ok.created).toHaveLength(1)
    const bad = { dynqrcodes: [{ destination_url: 'x', name: 'a' }, { destination_url: 'https://a.example/', name: '' }] }
    expect(await failure(bus.request(S.batch, { principal: personal, body: bad }))).toEqual({
      code: 'batch_invalid',
      message: 'one or more items are invalid',
      details: { items: [{ index: 0, error: 'destination_url must be an absolute http or https URL' }, { index: 1, error: 'name must be 1 to 200 characters after trimming' }] },
    })
  })

  it('answers an export chunk', async () => {
    const record = await create()
    const chunk = await bus.request<ExportChunk>(S.export, { principal: personal, cursor: null })
    expect(chunk).toEqual({
      csv: `code,short_url,destination_url,name,status,team_id,created_by,style,created_at,updated_at,tags\r\n${record.code},${SHORT}/${record.code},https://example.com/,Menu,active,,acct_a,{},${T0},${T0},\r\n`,
      next_cursor: null,
    })
  })

  it('resolves a code of any library without a principal, and null for one never issued', async () => {
    const record = await create()
    expect(await bus.request(S.resolve, { code: record.code })).toEqual({ code: record.code, destination_url: 'https://example.com/', status: 'active', deleted: false })
    expect(await bus.request(S.resolve, { code: 'Nothing1' })).toBeNull()
  })

  it('answers not_found for another library\'s code', async () => {
    const record = await create()
    expect(await failure(bus.request(S.get, { principal: otherPersonal, id: record.code }))).toEqual(notFound(record.code))
  })

  it('answers bad_request to an envelope without a principal', async () => {
    expect(await failure(bus.request(S.create, { body: { destination_url: 'https://example.com/', name: 'x' } })))
      .toEqual({ code: 'bad_request', message: 'malformed request at /principal: Expected required property' })
  })

  it('answers bad_request to a resolve whose code is not a string', async () => {
    expect(await failure(bus.request(S.resolve, { code: 7 })))
      .toEqual({ code: 'bad_request', message: 'malformed request at /code: Expected string' })
  })

  it('stops answering once unsubscribed', async () => {
    stop()
    expect(await failure(bus.request(S.resolve, { code: 'Whatever' })))
      .toEqual({ code: 'unavailable', message: `no service answers ${S.resolve}` })
  })
})
