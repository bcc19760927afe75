import { describe, expect, it } from 'bun:test'
import { APPROVAL_FORBIDDEN } from '@lr/library-records'
import { libraryOf } from '@lr/proto'
import { admin, badRequest, failure, otherPersonal, personal, setup, T0, writer, writerPersonal } from './fixtures'

const valid = { url: 'https://example.com/menu', name: 'Menu' }

async function withRecord(principal = personal) {
  const ctx = setup()
  const [record] = (await ctx.service.create(principal, valid)).created
  ctx.tick(60)
  return { ...ctx, record: record! }
}

describe('update (PATCH)', () => {
  it('changes url, name and style, replacing the style, and sets updated_at', async () => {
    const { service, record } = await withRecord()
    const updated = await service.update(personal, record.qr_id, { url: 'https://new.example/', name: ' New ', style: { dots: 'round' } })
    expect(updated).toEqual({ ...record, url: 'https://new.example/', name: 'New', style: { dots: 'round' }, updated_at: T0 + 60 })
    expect(await service.get(personal, record.qr_id)).toEqual(updated)
  })

  const rejected: [string, unknown, string][] = [
    ['an empty body', {}, 'body must set at least one of: url, name, style, tags, status'],
    ['a body that is not an object', 'name', 'body must be a JSON object'],
    ['an unknown field', { qr_id: 'qr_x' }, 'unknown field "qr_id"'],
    ['a created_at', { created_at: 5 }, 'unknown field "created_at"'],
    ['a status other than active or draft', { status: 'archived' }, 'status must be "active" or "draft"'],
    ['a bad url', { url: 'example.com' }, 'url must be an absolute http or https URL'],
    ['a blank name', { name: ' ' }, 'name must be 1 to 200 characters after trimming'],
    ['a style that is not an object', { style: 'red' }, 'style must be a JSON object'],
  ]
  for (const [what, body, message] of rejected) {
    it(`rejects ${what} with 400 "${message}" and changes nothing`, async () => {
      const { service, record } = await withRecord()
      expect(await failure(service.update(personal, record.qr_id, body))).toEqual(badRequest(message))
      expect(await service.get(personal, record.qr_id)).toEqual(record)
    })
  }

  it('changes another field of a record whose name, stored before names refused control characters, holds one, keeping the name', async () => {
    const { service, store, record } = await withRecord()
    await store.update(libraryOf(personal), record.qr_id, { name: 'Menu\tCard\u001b[0m' }, T0)
    const updated = await service.update(personal, record.qr_id, { url: 'https://new.example/' })
    expect(updated).toEqual({ ...record, url: 'https://new.example/', name: 'Menu\tCard\u001b[0m', updated_at: T0 + 60 })
    expect((await service.get(personal, record.qr_id)).name).toBe('Menu\tCard\u001b[0m')
  })

  it('answers not_found for a record of another library and changes nothing', async () => {
    const { service, record } = await withRecord()
    expect(await failure(service.update(otherPersonal, record.qr_id, { name: 'Mine' })))
      .toEqual({ code: 'not_found', message: `no QR code "${record.qr_id}" in this library` })
    expect(await service.get(personal, record.qr_id)).toEqual(record)
  })

  it('answers not_found when a member\'s personal key reaches for the team\'s record', async () => {
    const { service, record } = await withRecord(writer)
    expect((await failure(service.update(writerPersonal, record.qr_id, { name: 'x' }))).code).toBe('not_found')
  })

  it('lets the owner of a personal library move a record to draft and back to active', async () => {
    const { service, record } = await withRecord()
    expect((await service.update(personal, record.qr_id, { status: 'draft' })).status).toBe('draft')
    expect((await service.update(personal, record.qr_id, { status: 'active' })).status).toBe('active')
  })
})

describe('review of shared-library drafts', () => {
  it('forbids a writer to approve a draft (draft -> active) and leaves it a draft', async () => {
    const { service, record } = await withRecord(writer)
    expect(await failure(service.update(writer, record.qr_id, { status: 'active', name: 'Approved?' })))
      .toEqual({ code: 'forbidden', message: APPROVAL_FORBIDDEN })
    expect(await service.get(writer, record.qr_id)).toEqual(record)
  })

  it('lets a team admin approve a draft', async () => {
    const { service, record } = await withRecord(writer)
    const approved = await service.update(admin, record.qr_id, { status: 'active' })
    expect(approved).toEqual({ ...record, status: 'active', updated_at: T0 + 60 })
  })

  it('lets a writer edit a draft, which stays a draft', async () => {
    const { service, record } = await withRecord(writer)
    expect(await service.update(writer, record.qr_id, { name: 'Edited', status: 'draft' }))
      .toEqual({ ...record, name: 'Edited', updated_at: T0 + 60 })
  })

  it('lets a writer send an approved record back to draft, and keep an active one active', async () => {
    const { service, record } = await withRecord(writer)
    await service.update(admin, record.qr_id, { status: 'active' })
    expect((await service.update(writer, record.qr_id, { status: 'active', name: 'Same' })).status).toBe('active')
    expect((await service.update(writer, record.qr_id, { status: 'draft' })).status).toBe('draft')
  })
})
