import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { type Bus } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { DYNAMIC_SUBJECTS as S } from '@lr/proto'
import { serveDynamic } from '../src/handlers'
import { badRequest, failure, notFound, otherPersonal, personal, setup } from './fixtures'

const item = (name: string) => ({ destination_url: 'https://example.com/', name })

describe("analytics' directory: codes and find", () => {
  let ctx: ReturnType<typeof setup>
  let bus: Bus
  let stop: () => void
  beforeEach(() => {
    ctx = setup({ codesPageSize: 2 })
    bus = createLocalBus()
    stop = serveDynamic(bus, ctx.service)
  })
  afterEach(async () => {
    stop()
    await bus.close()
    ctx.close()
  })

  const created = async () => (await ctx.service.batch(personal, [item('a'), item('b'), item('c')])).created.map((r) => r.code) as [string, string, string]

  it('pages through every live code of the library, oldest first, leaving out deleted ones', async () => {
    const [a, b, c] = await created()
    await ctx.service.create(otherPersonal, item('other'))
    await ctx.service.delete(personal, b)
    await ctx.service.create(personal, item('d'))
    const first = await ctx.service.codes(personal, null)
    const second = await ctx.service.codes(personal, first.next_cursor)
    expect(first.codes).toEqual([a, c])
    expect(second).toEqual({ codes: [expect.any(String)], next_cursor: null })
  })

  it('answers a smaller page when asked, never a larger one', async () => {
    const [a, b] = await created()
    const one = await ctx.service.codes(personal, null, 1)
    expect(one).toEqual({ codes: [a], next_cursor: expect.any(String) })
    expect((await ctx.service.codes(personal, one.next_cursor, 1)).codes).toEqual([b])
    expect((await ctx.service.codes(personal, null, 50)).codes).toEqual([a, b])
  })

  it('answers no codes for an empty library', async () => {
    expect(await ctx.service.codes(personal, null)).toEqual({ codes: [], next_cursor: null })
  })

  it('rejects a cursor it did not issue with 400', async () => {
    expect(await failure(ctx.service.codes(personal, '!!'))).toEqual(badRequest('cursor is not one this API issued'))
  })

  it('finds a live and a soft-deleted code of the library', async () => {
    const [a, b] = await created()
    await ctx.service.delete(personal, b)
    expect(await ctx.service.find(personal, a)).toEqual({ code: a, deleted: false })
    expect(await ctx.service.find(personal, b)).toEqual({ code: b, deleted: true })
  })

  it('answers 404 for a code of another library, never issued or malformed', async () => {
    const [a] = await created()
    expect(await failure(ctx.service.find(otherPersonal, a))).toEqual(notFound(a))
    expect(await failure(ctx.service.find(personal, 'Nothing1'))).toEqual(notFound('Nothing1'))
    expect(await failure(ctx.service.find(personal, 'a.b'))).toEqual(notFound('a.b'))
  })

  it('serves both over the bus', async () => {
    const [a, b, c] = await created()
    expect(await bus.request(S.codes, { principal: personal, cursor: null })).toEqual({ codes: [a, b], next_cursor: expect.any(String) })
    expect(await bus.request(S.find, { principal: personal, id: c })).toEqual({ code: c, deleted: false })
    expect(await failure(bus.request(S.find, { principal: otherPersonal, id: c }))).toEqual(notFound(c))
  })

  it('answers bad_request to a codes request without a cursor', async () => {
    expect(await failure(bus.request(S.codes, { principal: personal })))
      .toEqual(badRequest('malformed request at /cursor: Expected required property'))
  })
})
