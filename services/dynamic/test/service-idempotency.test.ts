import { describe, expect, it } from 'bun:test'
import { admin, failure, personal, setup, writer } from './fixtures'

const valid = { destination_url: 'https://example.com/', name: 'Menu' }

describe('Idempotency-Key on creates', () => {
  it('replays the first answer of a create and stores and announces nothing more', async () => {
    const { service, announced } = setup()
    const first = await service.create(personal, valid, 'idem-1')
    expect(await service.create(personal, valid, 'idem-1')).toEqual(first)
    expect((await service.list(personal, {})).dynqrcodes).toEqual(first.created)
    expect(announced).toHaveLength(1)
  })

  it('replays a batch, bare array or not, with the same codes', async () => {
    const { service } = setup()
    const first = await service.batch(personal, [valid, valid], 'idem-b')
    expect(await service.batch(personal, [valid, valid], 'idem-b')).toEqual(first)
    expect((await service.list(personal, {})).dynqrcodes).toHaveLength(2)
  })

  it('answers 422 when the key comes back with another body or route', async () => {
    const { service } = setup()
    await service.create(personal, valid, 'idem-2')
    const conflict = { code: 'idempotency_conflict' as const, message: 'this Idempotency-Key was already used with a different request' }
    expect(await failure(service.create(personal, { ...valid, name: 'Other' }, 'idem-2'))).toEqual(conflict)
    expect(await failure(service.batch(personal, [valid], 'idem-2'))).toEqual(conflict)
    expect((await service.list(personal, {})).dynqrcodes).toHaveLength(1)
  })

  it('keeps keys per API key: another key of the same team creates its own code', async () => {
    const { service } = setup()
    const mine = await service.create(writer, valid, 'idem-3')
    const theirs = await service.create(admin, valid, 'idem-3')
    expect(theirs.created[0]!.code).not.toBe(mine.created[0]!.code)
  })

  it('does not remember a 400, so the fixed request with the same key creates', async () => {
    const { service } = setup()
    expect((await failure(service.create(personal, { name: 'x' }, 'idem-4'))).code).toBe('bad_request')
    expect((await service.create(personal, valid, 'idem-4')).created).toHaveLength(1)
  })

  it('keeps the receipt of the codes finally stored when a drawn code was taken', async () => {
    const codes = ['Taken001', 'Taken001', 'Fresh001']
    const { service } = setup({ newCode: () => codes.shift() ?? 'Spare001' })
    await service.create(personal, valid)
    const retried = await service.create(personal, valid, 'idem-5')
    expect(retried.created[0]!.code).toBe('Fresh001')
    expect(await service.create(personal, valid, 'idem-5')).toEqual(retried)
  })
})

describe('Idempotency-Key on POST .../review', () => {
  const NEW = 'https://example.com/new'
  /** An active team code with a writer's pending change of its destination. */
  async function pendingCode(s: ReturnType<typeof setup>) {
    const [draft] = (await s.service.create(writer, valid)).created
    await s.service.update(admin, draft!.code, { status: 'active' })
    await s.service.update(writer, draft!.code, { destination_url: NEW })
    return draft!.code
  }

  it('replays the first decision on a retry (not a 409) and changes nothing more', async () => {
    const s = setup()
    const code = await pendingCode(s)
    const first = await s.service.review(admin, code, { decision: 'approve' }, undefined, 'rev-1')
    expect([first.destination_url, first.pending_change]).toEqual([NEW, undefined])
    const announced = s.announced.length
    const updates = s.calls.update
    s.tick(30)
    expect(await s.service.review(admin, code, { decision: 'approve' }, undefined, 'rev-1')).toEqual(first)
    expect([s.announced.length, s.calls.update]).toEqual([announced, updates])
    // Without the key, the same retry is the 409 it always was.
    expect((await failure(s.service.review(admin, code, { decision: 'approve' }))).code).toBe('conflict')
  })

  it('answers 422 for the key with another decision, another code or a create\'s body, and writes nothing', async () => {
    const s = setup()
    const code = await pendingCode(s)
    const other = await pendingCode(s)
    await s.service.review(admin, code, { decision: 'reject' }, undefined, 'rev-2')
    const conflict = { code: 'idempotency_conflict' as const, message: 'this Idempotency-Key was already used with a different request' }
    expect(await failure(s.service.review(admin, code, { decision: 'approve' }, undefined, 'rev-2'))).toEqual(conflict)
    expect(await failure(s.service.review(admin, other, { decision: 'reject' }, undefined, 'rev-2'))).toEqual(conflict)
    expect(await failure(s.service.create(admin, valid, 'rev-2'))).toEqual(conflict)
    expect((await s.service.get(admin, other)).pending_change?.destination_url).toBe(NEW)
    // And a create's key is not a review's.
    await s.service.create(admin, valid, 'made-1')
    expect(await failure(s.service.review(admin, other, { decision: 'reject' }, undefined, 'made-1'))).toEqual(conflict)
  })

  it('gives two reviews sent at once with one key the same answer, and applies the decision once', async () => {
    const s = setup()
    const code = await pendingCode(s)
    const announced = s.announced.length
    const [a, b] = await Promise.all([
      s.service.review(admin, code, { decision: 'approve' }, undefined, 'rev-3'),
      s.service.review(admin, code, { decision: 'approve' }, undefined, 'rev-3'),
    ])
    expect(b).toEqual(a)
    expect(s.announced.length).toBe(announced + 1)
  })

  it('does not remember a refused review: a 400, or a 409 before anything was pending', async () => {
    const s = setup()
    const code = await pendingCode(s)
    expect((await failure(s.service.review(admin, code, { decision: 'maybe' }, undefined, 'rev-4'))).code).toBe('bad_request')
    expect((await s.service.review(admin, code, { decision: 'reject' }, undefined, 'rev-4')).pending_change).toBeUndefined()
    const [plain] = (await s.service.create(personal, valid)).created
    expect((await failure(s.service.review(personal, plain!.code, { decision: 'approve' }, undefined, 'rev-5'))).code).toBe('conflict')
    expect((await failure(s.service.review(personal, plain!.code, { decision: 'approve' }, undefined, 'rev-5'))).code).toBe('conflict')
  })
})
