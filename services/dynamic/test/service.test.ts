import { describe, expect, it } from 'bun:test'
import { admin, badRequest, failure, notFound, otherPersonal, personal, setup, SHORT, T0, writer } from './fixtures'

const valid = { destination_url: 'https://example.com/menu', name: 'Menu' }
const long = (n: number) => 'x'.repeat(n)

describe('create', () => {
  it('creates a personal code that is active with a null team_id, an empty style and its short_url', async () => {
    const { service } = setup()
    const { created } = await service.create(personal, valid)
    const code = created[0]!.code
    expect(created).toEqual([{
      code: expect.stringMatching(/^[0-9A-Za-z]{8}$/), short_url: `${SHORT}/${code}`, destination_url: valid.destination_url,
      name: 'Menu', style: {}, tags: [], status: 'active', team_id: null, created_by: 'acct_a', created_at: T0, updated_at: T0,
    }])
  })

  it('creates a shared-library code as a draft of the team, attributed to the key\'s member', async () => {
    const { service } = setup()
    const { created } = await service.create(writer, { ...valid, style: { color: 'red' } })
    expect(created[0]).toMatchObject({ status: 'draft', team_id: 'team_1', created_by: 'acct_w', style: { color: 'red' } })
  })

  it('creates a draft also when a team admin creates it', async () => {
    const { service } = setup()
    expect((await service.create(admin, valid)).created[0]!.status).toBe('draft')
  })

  it('announces the new code to the resolvers', async () => {
    const { service, announced } = setup()
    const [record] = (await service.create(writer, valid)).created
    expect(announced).toEqual([{ code: record!.code, destination_url: valid.destination_url, status: 'draft', deleted: false }])
  })

  it('accepts a destination of exactly 2048 characters and a 200-character name', async () => {
    const { service } = setup()
    const url = `https://example.com/${long(2048 - 20)}`
    const { created } = await service.create(personal, { destination_url: url, name: long(200) })
    expect([created[0]!.destination_url.length, created[0]!.name.length]).toEqual([2048, 200])
  })

  const rejected: [string, unknown, string][] = [
    ['a body that is not an object', ['x'], 'body must be a JSON object'],
    ['a missing destination_url', { name: 'x' }, 'destination_url is required'],
    ['a url field instead of destination_url', { url: 'https://example.com/', name: 'x' }, 'unknown field "url"'],
    ['a relative destination', { destination_url: '/menu', name: 'x' }, 'destination_url must be an absolute http or https URL'],
    ['a destination of another scheme', { destination_url: 'javascript://example.com/%0aalert(1)', name: 'x' }, 'destination_url must be an absolute http or https URL with a host'],
    ['a destination without a host', { destination_url: 'file:///etc/passwd', name: 'x' }, 'destination_url must be an absolute http or https URL with a host'],
    ['a destination over 2048 characters', { destination_url: `https://example.com/${long(2029)}`, name: 'x' }, 'destination_url must be at most 2048 characters'],
    ['a missing name', { destination_url: valid.destination_url }, 'name is required'],
    ['a blank name', { ...valid, name: '   ' }, 'name must be 1 to 200 characters after trimming'],
    ['a style that is an array', { ...valid, style: [1] }, 'style must be a JSON object'],
    ['a code', { ...valid, code: 'mycode12' }, 'unknown field "code"'],
    ['a short_url', { ...valid, short_url: `${SHORT}/x` }, 'unknown field "short_url"'],
    ['a status', { ...valid, status: 'active' }, 'unknown field "status"'],
  ]
  for (const [what, body, message] of rejected) {
    it(`rejects ${what} with 400 "${message}" and stores nothing`, async () => {
      const { service, announced } = setup()
      expect(await failure(service.create(personal, body))).toEqual(badRequest(message))
      expect((await service.list(personal, {})).dynqrcodes).toEqual([])
      expect(announced).toEqual([])
    })
  }
})

describe('get, list and delete', () => {
  it('returns a code to its library and not_found to another library', async () => {
    const { service } = setup()
    const [record] = (await service.create(personal, valid)).created
    expect(await service.get(personal, record!.code)).toEqual(record!)
    expect(await failure(service.get(otherPersonal, record!.code))).toEqual(notFound(record!.code))
  })

  it('lists the library oldest first with a cursor to the next page', async () => {
    const { service } = setup()
    const made = []
    for (const name of ['a', 'b', 'c']) made.push(...(await service.create(personal, { ...valid, name })).created)
    await service.create(otherPersonal, valid)
    const first = await service.list(personal, { limit: '2' })
    expect(first.dynqrcodes).toEqual(made.slice(0, 2))
    expect(await service.list(personal, { limit: '2', cursor: first.next_cursor! })).toEqual({ dynqrcodes: made.slice(2), next_cursor: null })
  })

  it('lists only codes of the given status', async () => {
    const { service } = setup()
    const [draft] = (await service.create(writer, valid)).created
    const [approved] = (await service.create(writer, { ...valid, name: 'B' })).created
    const active = await service.update(admin, approved!.code, { status: 'active' })
    expect((await service.list(writer, { status: 'draft' })).dynqrcodes).toEqual([draft!])
    expect((await service.list(writer, { status: 'active' })).dynqrcodes).toEqual([active])
  })

  it('lists only codes updated since the given second', async () => {
    const { service, tick } = setup()
    await service.create(personal, valid)
    tick(10)
    const [later] = (await service.create(personal, valid)).created
    expect((await service.list(personal, { updated_since: String(T0 + 10) })).dynqrcodes).toEqual([later!])
  })

  it('rejects bad list parameters with 400', async () => {
    const { service } = setup()
    expect(await failure(service.list(personal, { limit: '1001' }))).toEqual(badRequest('limit must be an integer from 1 to 1000'))
    expect(await failure(service.list(personal, { status: 'archived' }))).toEqual(badRequest('status must be "active" or "draft"'))
    expect(await failure(service.list(personal, { order: 'name' }))).toEqual(badRequest('unknown query parameter "order"'))
  })

  it('soft-deletes a code: answers with it, hides it from get, list and a second delete', async () => {
    const { service, tick } = setup()
    const [record] = (await service.create(personal, valid)).created
    tick(5)
    expect(await service.delete(personal, record!.code)).toEqual({ deleted: record!.code })
    expect(await failure(service.get(personal, record!.code))).toEqual(notFound(record!.code))
    expect(await failure(service.update(personal, record!.code, { name: 'x' }))).toEqual(notFound(record!.code))
    expect(await failure(service.delete(personal, record!.code))).toEqual(notFound(record!.code))
    expect((await service.list(personal, {})).dynqrcodes).toEqual([])
  })

  it('keeps a soft-deleted code resolvable as deleted and announces it', async () => {
    const { service, announced } = setup()
    const [record] = (await service.create(personal, valid)).created
    await service.delete(personal, record!.code)
    const gone = { code: record!.code, destination_url: valid.destination_url, status: 'active' as const, deleted: true }
    expect(await service.resolve(record!.code)).toEqual(gone)
    expect(announced.at(-1)).toEqual(gone)
  })

  it('answers not_found when deleting another library\'s code and keeps it', async () => {
    const { service } = setup()
    const [record] = (await service.create(writer, valid)).created
    expect(await failure(service.delete(personal, record!.code))).toEqual(notFound(record!.code))
    expect(await service.get(admin, record!.code)).toEqual(record!)
  })
})
