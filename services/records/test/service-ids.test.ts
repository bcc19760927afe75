import { describe, expect, it } from 'bun:test'
import { INSERT_ATTEMPTS } from '@lr/library-records'
import { failure, otherPersonal, personal, setup } from './fixtures'

const valid = { url: 'https://example.com/menu', name: 'Menu' }

/** A generator that hands out the given ids in turn, then repeats the last one. */
const scripted = (...ids: string[]) => {
  let i = 0
  return () => ids[Math.min(i++, ids.length - 1)]!
}

describe('qr_id issuing', () => {
  it('retries with a fresh qr_id when the store reports one as taken by another library', async () => {
    const { service } = setup({ newId: scripted('qr_taken', 'qr_taken', 'qr_fresh') })
    await service.create(otherPersonal, valid)
    expect((await service.create(personal, valid)).created[0]!.qr_id).toBe('qr_fresh')
  })

  it(`gives up with an internal error after ${INSERT_ATTEMPTS} taken qr_ids, storing nothing`, async () => {
    const { service } = setup({ newId: scripted('qr_always') })
    await service.create(personal, valid)
    expect(await failure(service.create(personal, { ...valid, name: 'second' }))).toEqual({ code: 'internal', message: 'could not issue a unique qr_id' })
    expect((await service.list(personal, {})).qrcodes.map((r) => r.name)).toEqual(['Menu'])
  })
})
