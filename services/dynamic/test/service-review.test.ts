import { describe, expect, it } from 'bun:test'
import { etagOf } from '@lr/platform/etag'
import { libraryOf } from '@lr/proto'
import { admin, failure, personal, setup, T0, writer } from './fixtures'

const OLD = 'https://example.com/old'
const NEW = 'https://example.com/new'
const IOS = [{ os: 'ios' as const, destination_url: 'https://apps.apple.com/app/1' }]

/** An active code of the team library (a writer's draft an admin approved). */
async function activeTeamCode(s: ReturnType<typeof setup>, extra: object = {}) {
  const [draft] = (await s.service.create(writer, { destination_url: OLD, name: 'Poster', ...extra })).created
  return s.service.update(admin, draft!.code, { status: 'active' })
}

describe('reviewed edits in a team library', () => {
  it('approves a pending change stored before fallback_url was reviewed without touching the fallback', async () => {
    const s = setup()
    const code = (await activeTeamCode(s, { fallback_url: 'https://example.com/approved-fallback' })).code
    // As a pending change was stored before: the destination and rules only.
    await s.store.update(libraryOf(writer), code, { pending_change: { destination_url: NEW, redirect_rules: [], requested_by: writer.account_id, requested_at: T0 } } as never, T0 + 1)
    const approved = await s.service.review(admin, code, { decision: 'approve' })
    expect([approved.destination_url, approved.fallback_url, approved.pending_change]).toEqual([NEW, 'https://example.com/approved-fallback', undefined])
  })

  it('keeps a writer\'s new destination of an active code pending: record unchanged, pending_change set, resolver entry the approved one', async () => {
    const s = setup()
    const code = (await activeTeamCode(s)).code
    s.tick(10)
    const answer = await s.service.update(writer, code, { destination_url: NEW, name: 'Renamed' })
    expect(answer).toMatchObject({ destination_url: OLD, name: 'Renamed', updated_at: T0 + 10 })
    expect(answer.pending_change).toEqual({ destination_url: NEW, redirect_rules: [], fallback_url: null, requested_by: writer.account_id, requested_at: T0 + 10 })
    expect(await s.service.resolve(code)).toEqual({ code, destination_url: OLD, status: 'active', deleted: false })
  })

  it('lets an admin approve: the destination applies, pending_change goes, the resolvers hear the change and the ETag moves', async () => {
    const s = setup()
    const code = (await activeTeamCode(s)).code
    const pending = await s.service.update(writer, code, { destination_url: NEW })
    s.tick(5)
    const approved = await s.service.review(admin, code, { decision: 'approve' })
    expect(approved).toMatchObject({ destination_url: NEW, updated_at: T0 + 5 })
    expect('pending_change' in approved).toBe(false)
    expect(s.announced.at(-1)).toEqual({ code, destination_url: NEW, status: 'active', deleted: false })
    expect(etagOf(approved)).not.toBe(etagOf(pending))
    expect(await s.service.resolve(code)).toMatchObject({ destination_url: NEW })
  })

  it('lets an admin reject: the approved destination stays and pending_change goes', async () => {
    const s = setup()
    const code = (await activeTeamCode(s)).code
    await s.service.update(writer, code, { destination_url: NEW })
    const rejected = await s.service.review(admin, code, { decision: 'reject' })
    expect(rejected.destination_url).toBe(OLD)
    expect(rejected.pending_change).toBeUndefined()
  })

  it('answers 409 for a review with nothing pending, 403 for a writer, 409 for a personal key on its own code, 404 for a code the key cannot reach, 400 for a bad body', async () => {
    const s = setup()
    const code = (await activeTeamCode(s)).code
    expect(await failure(s.service.review(admin, code, { decision: 'approve' }))).toEqual({ code: 'conflict', message: 'this code has no pending change to review' })
    await s.service.update(writer, code, { destination_url: NEW })
    expect((await failure(s.service.review(writer, code, { decision: 'approve' }))).code).toBe('forbidden')
    const [own] = (await s.service.create(personal, { destination_url: OLD, name: 'Mine' })).created
    expect((await failure(s.service.review(personal, own!.code, { decision: 'approve' }))).code).toBe('conflict')
    for (const [key, id] of [[personal, code], [writer, 'Nope1234'], [personal, 'Nope1234']] as const)
      expect((await failure(s.service.review(key, id, { decision: 'approve' }))).code, id).toBe('not_found')
    for (const body of [{}, { decision: 'maybe' }, { decision: 'approve', extra: 1 }, 'approve'])
      expect((await failure(s.service.review(admin, code, body))).code, JSON.stringify(body)).toBe('bad_request')
    expect((await s.service.get(admin, code)).pending_change?.destination_url).toBe(NEW)
  })

  it('replaces a pending change with a later writer\'s, and withdraws it when a writer asks for the approved values again', async () => {
    const s = setup()
    const code = (await activeTeamCode(s)).code
    await s.service.update(writer, code, { destination_url: NEW })
    const other = { ...writer, account_id: 'acct_w2', key_id: 'key_w2' }
    s.tick(3)
    const replaced = await s.service.update(other, code, { redirect_rules: IOS })
    expect(replaced.pending_change).toEqual({ destination_url: OLD, redirect_rules: IOS, fallback_url: null, requested_by: 'acct_w2', requested_at: T0 + 3 })
    const withdrawn = await s.service.update(writer, code, { redirect_rules: [] })
    expect([withdrawn.pending_change, withdrawn.redirect_rules, withdrawn.destination_url]).toEqual([undefined, undefined, OLD])
  })

  it('applies an admin\'s own PATCH at once and drops a pending change; an admin\'s rename keeps it', async () => {
    const s = setup()
    const code = (await activeTeamCode(s)).code
    await s.service.update(writer, code, { destination_url: NEW })
    const renamed = await s.service.update(admin, code, { name: 'Admin name' })
    expect(renamed.pending_change?.destination_url).toBe(NEW)
    const moved = await s.service.update(admin, code, { destination_url: 'https://example.com/admin' })
    expect([moved.destination_url, moved.pending_change]).toEqual(['https://example.com/admin', undefined])
    expect(s.announced.at(-1)?.destination_url).toBe('https://example.com/admin')
  })

  it('drops a pending change when the code moves to draft, and applies a writer\'s edits of a draft at once', async () => {
    const s = setup()
    const code = (await activeTeamCode(s)).code
    await s.service.update(writer, code, { destination_url: NEW })
    const draft = await s.service.update(writer, code, { status: 'draft' })
    expect([draft.status, draft.destination_url, draft.pending_change]).toEqual(['draft', OLD, undefined])
    const edited = await s.service.update(writer, code, { destination_url: NEW, redirect_rules: IOS })
    expect([edited.destination_url, edited.redirect_rules, edited.pending_change]).toEqual([NEW, IOS, undefined])
  })

  it('leaves personal libraries as they were: a PATCH of the destination and rules applies at once', async () => {
    const s = setup()
    const [record] = (await s.service.create(personal, { destination_url: OLD, name: 'Mine' })).created
    const updated = await s.service.update(personal, record!.code, { destination_url: NEW, redirect_rules: IOS })
    expect([updated.destination_url, updated.redirect_rules, updated.pending_change]).toEqual([NEW, IOS, undefined])
    expect(s.announced.at(-1)).toEqual({ code: record!.code, destination_url: NEW, status: 'active', deleted: false, redirect_rules: IOS })
  })

  it('honours If-Match on a review: a stale tag is 412 and nothing is approved', async () => {
    const s = setup()
    const code = (await activeTeamCode(s)).code
    const first = await s.service.update(writer, code, { destination_url: NEW })
    s.tick(1)
    await s.service.update({ ...writer, account_id: 'acct_w2' }, code, { destination_url: 'https://example.com/other' })
    expect((await failure(s.service.review(admin, code, { decision: 'approve' }, etagOf(first)))).code).toBe('precondition_failed')
    expect((await s.service.get(admin, code)).destination_url).toBe(OLD)
  })

  it('lists codes by pending: true only those awaiting review, false only the others', async () => {
    const s = setup()
    const a = (await activeTeamCode(s)).code
    const b = (await activeTeamCode(s)).code
    await s.service.update(writer, a, { destination_url: NEW })
    const codes = async (pending: string) => (await s.service.list(admin, { pending })).dynqrcodes.map((r) => r.code)
    expect(await codes('true')).toEqual([a])
    expect(await codes('false')).toEqual([b])
    expect((await failure(s.service.list(admin, { pending: 'yes' }))).message).toBe('pending must be "true" or "false"')
  })
})

describe('redirect rules', () => {
  it('stores rules normalised, answers them, and omits redirect_rules when there are none', async () => {
    const s = setup()
    const [record] = (await s.service.create(personal, { destination_url: OLD, name: 'x', redirect_rules: [{ os: 'android', destination_url: 'HTTPS://Play.Example' }] })).created
    expect(record!.redirect_rules).toEqual([{ os: 'android', destination_url: 'https://play.example/' }])
    const [plain] = (await s.service.create(personal, { destination_url: OLD, name: 'y' })).created
    expect('redirect_rules' in plain!).toBe(false)
  })

  it('refuses more than 5 rules, an unknown OS, an OS named twice and a bad destination with 400', async () => {
    const s = setup()
    const rule = (os: string, url = 'https://a.example') => ({ os, destination_url: url })
    const bodies = [
      [rule('ios'), rule('android'), rule('windows'), rule('macos'), rule('linux'), rule('ios')],
      [rule('symbian')], [rule('ios'), rule('ios')], [rule('ios', 'ftp://x.example')], [{ os: 'ios' }], [{ ...rule('ios'), extra: 1 }],
    ]
    for (const redirect_rules of bodies) {
      const error = await failure(s.service.create(personal, { destination_url: OLD, name: 'x', redirect_rules }))
      expect(error.code, JSON.stringify(redirect_rules)).toBe('bad_request')
    }
    expect((await failure(s.service.create(personal, { destination_url: OLD, name: 'x', redirect_rules: [rule('ios'), rule('ios')] }))).message)
      .toBe('redirect_rules[1].os "ios" is already named by an earlier rule')
    expect((await failure(s.service.create(personal, { destination_url: OLD, name: 'x', redirect_rules: [rule('ios', 'mailto:a@b.c')] }))).message)
      .toContain('redirect_rules[0].destination_url')
    const message = async (redirect_rules: unknown) => (await failure(s.service.create(personal, { destination_url: OLD, name: 'x', redirect_rules }))).message
    expect(await message(bodies[0])).toBe('redirect_rules must hold at most 5 items')
    expect(await message([rule('ios'), rule('symbian')])).toBe('redirect_rules[1].os must be "ios" or "android" or "windows" or "macos" or "linux"')
    expect(await message([{ os: 'ios' }])).toBe('redirect_rules[0].destination_url is required')
    expect(await message([rule('ios', `https://a.example/${'x'.repeat(2048)}`)])).toBe('redirect_rules[0].destination_url must be at most 2048 characters')
  })

  it('puts a writer\'s edit of the rules of an active team code into pending_change; approval hands them to the resolver', async () => {
    const s = setup()
    const code = (await activeTeamCode(s)).code
    const pending = await s.service.update(writer, code, { redirect_rules: IOS })
    expect([pending.redirect_rules, pending.pending_change?.redirect_rules]).toEqual([undefined, IOS])
    expect((await s.service.resolve(code))?.redirect_rules).toBeUndefined()
    await s.service.review(admin, code, { decision: 'approve' })
    expect((await s.service.resolve(code))?.redirect_rules).toEqual(IOS)
  })
})
