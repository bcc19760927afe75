import { describe, expect, it } from 'bun:test'
import { APPROVAL_FORBIDDEN } from '@lr/library-records'
import { admin, badRequest, failure, notFound, otherPersonal, personal, setup, T0, writer, writerPersonal } from './fixtures'

const valid = { destination_url: 'https://example.com/menu', name: 'Menu' }

async function withRecord(principal = personal) {
  const ctx = setup()
  const [record] = (await ctx.service.create(principal, valid)).created
  ctx.tick(60)
  ctx.announced.length = 0
  return { ...ctx, record: record! }
}

describe('update (PATCH)', () => {
  it('changes destination_url, name and style, replacing the style, and sets updated_at', async () => {
    const { service, record } = await withRecord()
    const updated = await service.update(personal, record.code, { destination_url: 'https://new.example/', name: ' New ', style: { dots: 'round' } })
    expect(updated).toEqual({ ...record, destination_url: 'https://new.example/', name: 'New', style: { dots: 'round' }, updated_at: T0 + 60 })
    expect(await service.get(personal, record.code)).toEqual(updated)
  })

  it('announces the new destination before answering', async () => {
    const { service, record, announced } = await withRecord()
    await service.update(personal, record.code, { destination_url: 'https://new.example/' })
    expect(announced).toEqual([{ code: record.code, destination_url: 'https://new.example/', status: 'active', deleted: false }])
  })

  it('announces nothing and writes nothing for a PATCH that changes nothing', async () => {
    const { service, record, announced, calls } = await withRecord()
    const writes = calls.update ?? 0
    expect(await service.update(personal, record.code, { destination_url: record.destination_url, name: 'Menu', status: 'active' })).toEqual(record)
    expect([announced, calls.update ?? 0]).toEqual([[], writes])
  })

  it('answers even when the announcement fails: the change is stored (and logged)', async () => {
    const { service } = setup({ announce: async () => { throw new Error('bus down') } })
    const [record] = (await service.create(personal, valid)).created
    expect((await service.update(personal, record!.code, { name: 'Still' })).name).toBe('Still')
    expect((await service.get(personal, record!.code)).name).toBe('Still')
  })

  const rejected: [string, unknown, string][] = [
    ['an empty body', {}, 'body must set at least one of: destination_url, name, style, tags, status, redirect_rules, expires_at, max_scans, fallback_url'],
    ['a body that is not an object', 'name', 'body must be a JSON object'],
    ['an unknown field', { code: 'Other123' }, 'unknown field "code"'],
    ['a short_url', { short_url: 'https://x.example/abc' }, 'unknown field "short_url"'],
    ['a status other than active or draft', { status: 'deleted' }, 'status must be "active" or "draft"'],
    ['a bad destination', { destination_url: 'example.com' }, 'destination_url must be an absolute http or https URL'],
    ['a blank name', { name: ' ' }, 'name must be 1 to 200 characters after trimming'],
    ['a style that is not an object', { style: 'red' }, 'style must be a JSON object'],
  ]
  for (const [what, body, message] of rejected) {
    it(`rejects ${what} with 400 "${message}" and changes nothing`, async () => {
      const { service, record, announced } = await withRecord()
      expect(await failure(service.update(personal, record.code, body))).toEqual(badRequest(message))
      expect(await service.get(personal, record.code)).toEqual(record)
      expect(announced).toEqual([])
    })
  }

  it('answers not_found for a code of another library and changes nothing', async () => {
    const { service, record } = await withRecord()
    expect(await failure(service.update(otherPersonal, record.code, { name: 'Mine' }))).toEqual(notFound(record.code))
    expect(await service.get(personal, record.code)).toEqual(record)
  })

  it('answers not_found when a member\'s personal key reaches for the team\'s code', async () => {
    const { service, record } = await withRecord(writer)
    expect(await failure(service.update(writerPersonal, record.code, { name: 'x' }))).toEqual(notFound(record.code))
  })

  it('lets the owner of a personal library move a code to draft and back to active', async () => {
    const { service, record, announced } = await withRecord()
    expect((await service.update(personal, record.code, { status: 'draft' })).status).toBe('draft')
    expect((await service.update(personal, record.code, { status: 'active' })).status).toBe('active')
    expect(announced.map((e) => e.status)).toEqual(['draft', 'active'])
  })
})

describe('review of shared-library drafts', () => {
  it('forbids a writer to approve a draft (draft -> active) and leaves it a draft', async () => {
    const { service, record, announced } = await withRecord(writer)
    expect(await failure(service.update(writer, record.code, { status: 'active', destination_url: 'https://evil.example/' })))
      .toEqual({ code: 'forbidden', message: APPROVAL_FORBIDDEN })
    expect(await service.get(writer, record.code)).toEqual(record)
    expect(announced).toEqual([])
  })

  it('lets a team admin approve a draft', async () => {
    const { service, record } = await withRecord(writer)
    expect(await service.update(admin, record.code, { status: 'active' })).toEqual({ ...record, status: 'active', updated_at: T0 + 60 })
  })

  it('lets a writer edit a draft, which stays a draft', async () => {
    const { service, record } = await withRecord(writer)
    expect(await service.update(writer, record.code, { name: 'Edited', status: 'draft' }))
      .toEqual({ ...record, name: 'Edited', updated_at: T0 + 60 })
  })

  it('lets a writer send an approved code back to draft, and keep an active one active', async () => {
    const { service, record } = await withRecord(writer)
    await service.update(admin, record.code, { status: 'active' })
    expect((await service.update(writer, record.code, { status: 'active', name: 'Same' })).status).toBe('active')
    expect((await service.update(writer, record.code, { status: 'draft' })).status).toBe('draft')
  })
})
