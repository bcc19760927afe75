import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { type Bus, type ExportChunk } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { ANALYTICS_SUBJECTS as S } from '@lr/proto'
import { serveAnalytics } from '../src/handlers'
import { alice, event, failure } from './fixtures'
import { setup } from './setup'

let bus: Bus
let stop: () => void
let ctx: ReturnType<typeof setup>
beforeEach(async () => {
  bus = createLocalBus()
  ctx = setup()
  stop = serveAnalytics(bus, ctx.service)
  await ctx.service.ingest([event(1)])
})
afterEach(async () => {
  stop()
  await bus.close()
  ctx.close()
})

describe('analytics handlers over the bus', () => {
  it('answers the first page of the summary, also to a request without a cursor (a gateway from before pages)', async () => {
    const page = { analytics: [{ code: 'Code0001', total_scans: 1, unique_scans: 1 }, { code: 'Code0002', total_scans: 0, unique_scans: 0 }], next_cursor: null }
    expect(await bus.request(S.summary, { principal: alice, query: {}, cursor: null })).toEqual(page)
    expect(await bus.request(S.summary, { principal: alice, query: {} })).toEqual(page)
  })

  it('answers the breakdown of one code', async () => {
    expect(await bus.request(S.breakdown, { principal: alice, code: 'Code0001', query: { from: '2025-01-10' } })).toMatchObject({
      code: 'Code0001', total_scans: 1, unique_scans: 1, daily: [{ date: '2025-01-10', scans: 1, unique_scans: 1 }],
    })
  })

  it('answers an export chunk', async () => {
    const chunk = await bus.request<ExportChunk>(S.export, { principal: alice, code: 'Code0001', query: {}, cursor: null })
    expect(chunk.next_cursor).toBeNull()
    expect(chunk.csv.split('\r\n')).toHaveLength(3)
  })

  it('carries a 404 back to the caller', async () => {
    expect(await failure(bus.request(S.breakdown, { principal: alice, code: 'Bobs0001', query: {} })))
      .toEqual({ code: 'not_found', message: 'no dynamic QR code "Bobs0001" in this library' })
  })

  it('answers bad_request to an envelope without a query', async () => {
    expect(await failure(bus.request(S.summary, { principal: alice })))
      .toEqual({ code: 'bad_request', message: 'malformed request at /query: Expected required property' })
  })

  it('answers bad_request to an export without a cursor', async () => {
    expect(await failure(bus.request(S.export, { principal: alice, code: 'Code0001', query: {} })))
      .toEqual({ code: 'bad_request', message: 'malformed request at /cursor: Expected required property' })
  })
})
