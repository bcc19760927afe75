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
