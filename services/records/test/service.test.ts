import { describe, expect, it } from 'bun:test'
import { LIST_CURSOR_REFUSED } from '@lr/platform/cursor'
import { failure, badRequest, otherPersonal, personal, setup, T0, writer, admin } from './fixtures'

const valid = { url: 'https://example.com/menu', name: 'Menu' }
const long = (n: number) => 'x'.repeat(n)

describe('create', () => {
  it('creates a personal record that is active with a null team_id and an empty style', async () => {
    const { service } = setup()
    const { created } = await service.create(personal, valid)
    expect(created).toEqual([{
      qr_id: expect.stringMatching(/^qr_[A-Za-z0-9_-]{21}$/), url: valid.url, name: 'Menu', style: {}, tags: [],
      status: 'active', team_id: null, created_by: 'acct_a', created_at: T0, updated_at: T0,
    }])
  })

  it('creates a shared-library record as a draft of the team, attributed to the key\'s member', async () => {
    const { service } = setup()
    const { created } = await service.create(writer, { ...valid, style: { color: 'red' } })
    expect(created[0]).toMatchObject({ status: 'draft', team_id: 'team_1', created_by: 'acct_w', style: { color: 'red' } })
  })

  it('creates a draft also when a team admin creates it', async () => {
    const { service } = setup()
    expect((await service.create(admin, valid)).created[0]!.status).toBe('draft')
  })

  it('trims the name and issues a different qr_id each time', async () => {
    const { service } = setup()
    const a = (await service.create(personal, { ...valid, name: '  Menu  ' })).created[0]!
    const b = (await service.create(personal, valid)).created[0]!
    expect(a.name).toBe('Menu')
    expect(a.qr_id).not.toBe(b.qr_id)
  })

  it('accepts a url of exactly 2048 characters and a 200-character name', async () => {
    const { service } = setup()
    const url = `https://example.com/${long(2048 - 20)}`
    const { created } = await service.create(personal, { url, name: long(200) })
    expect([created[0]!.url.length, created[0]!.name.length]).toEqual([2048, 200])
  })

  const rejected: [string, unknown, string][] = [
    ['a body that is not an object', ['x'], 'body must be a JSON object'],
    ['a missing url', { name: 'x' }, 'url is required'],
    ['a url that is not a string', { url: 42, name: 'x' }, 'url must be a string'],
    ['a relative url', { url: '/menu', name: 'x' }, 'url must be an absolute http or https URL'],
    ['a url with spaces', { url: 'https://exa mple.com', name: 'x' }, 'url must be an absolute http or https URL'],
    ['a url of another scheme', { url: 'ftp://example.com/f', name: 'x' }, 'url must be an absolute http or https URL with a host'],
    ['a url without a host', { url: 'file:///etc/passwd', name: 'x' }, 'url must be an absolute http or https URL with a host'],
    ['a url over 2048 characters', { url: `https://example.com/${long(2029)}`, name: 'x' }, 'url must be at most 2048 characters'],
    ['a missing name', { url: valid.url }, 'name is required'],
    ['a name that is not a string', { url: valid.url, name: 7 }, 'name must be a string'],
    ['a blank name', { url: valid.url, name: '   ' }, 'name must be 1 to 200 characters after trimming'],
    ['a name over 200 characters', { url: valid.url, name: long(201) }, 'name must be 1 to 200 characters after trimming'],
    ['a style that is an array', { ...valid, style: [1] }, 'style must be a JSON object'],
    ['a style that is null', { ...valid, style: null }, 'style must be a JSON object'],
    ['a style over 8 KiB as JSON', { ...valid, style: { x: long(8200) } }, 'style must be at most 8192 bytes as JSON'],
    ['a qr_id', { ...valid, qr_id: 'qr_mine' }, 'unknown field "qr_id"'],
    ['a status', { ...valid, status: 'active' }, 'unknown field "status"'],
    ['a created_at', { ...valid, created_at: 1 }, 'unknown field "created_at"'],
    ['a team_id', { ...valid, team_id: 'team_9' }, 'unknown field "team_id"'],
  ]
  for (const [what, body, message] of rejected) {
    it(`rejects ${what} with 400 "${message}" and stores nothing`, async () => {
      const { service } = setup()
      expect(await failure(service.create(personal, body))).toEqual(badRequest(message))
      expect((await service.list(personal, {})).qrcodes).toEqual([])
    })
  }
})

describe('get, list and delete', () => {
  it('returns a record to its library and not_found to another library', async () => {
    const { service } = setup()
    const [record] = (await service.create(personal, valid)).created
    expect(await service.get(personal, record!.qr_id)).toEqual(record!)
    expect(await failure(service.get(otherPersonal, record!.qr_id)))
      .toEqual({ code: 'not_found', message: `no QR code "${record!.qr_id}" in this library` })
  })

  it('lists the library oldest first with a cursor to the next page', async () => {
    const { service } = setup()
    const made = []
    for (const name of ['a', 'b', 'c']) made.push(...(await service.create(personal, { ...valid, name })).created)
    await service.create(otherPersonal, valid)
    const first = await service.list(personal, { limit: '2' })
    expect(first.qrcodes).toEqual(made.slice(0, 2))
    expect(await service.list(personal, { limit: '2', cursor: first.next_cursor! })).toEqual({ qrcodes: made.slice(2), next_cursor: null })
  })

  it('lists only records updated since the given second', async () => {
    const { service, tick } = setup()
    await service.create(personal, valid)
    tick(10)
    const [later] = (await service.create(personal, valid)).created
    expect((await service.list(personal, { updated_since: String(T0 + 10) })).qrcodes).toEqual([later!])
  })

  it('rejects bad list parameters with 400', async () => {
    const { service } = setup()
    expect(await failure(service.list(personal, { limit: '0' }))).toEqual(badRequest('limit must be an integer from 1 to 1000'))
    expect(await failure(service.list(personal, { cursor: 'zz' }))).toEqual(badRequest(LIST_CURSOR_REFUSED))
    expect(await failure(service.list(personal, { status: 'draft' }))).toEqual(badRequest('unknown query parameter "status"'))
  })

  it('deletes a record, answering with its qr_id, after which it is not found', async () => {
    const { service } = setup()
    const [record] = (await service.create(personal, valid)).created
    expect(await service.delete(personal, record!.qr_id)).toEqual({ deleted: record!.qr_id })
    expect((await failure(service.get(personal, record!.qr_id))).code).toBe('not_found')
  })

  it('answers not_found when deleting another library\'s record and keeps it', async () => {
    const { service } = setup()
    const [record] = (await service.create(writer, valid)).created
    expect(await failure(service.delete(personal, record!.qr_id)))
      .toEqual({ code: 'not_found', message: `no QR code "${record!.qr_id}" in this library` })
    expect(await service.get(admin, record!.qr_id)).toEqual(record!)
  })
})
