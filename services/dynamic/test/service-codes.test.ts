import { describe, expect, it } from 'bun:test'
import { INSERT_ATTEMPTS } from '@lr/library-records'
import { failure, notFound, personal, setup, writer } from './fixtures'

const valid = { destination_url: 'https://example.com/', name: 'Menu' }

/** A generator that hands out the given codes in turn, then repeats the last one. */
const scripted = (...codes: string[]) => {
  let i = 0
  return () => codes[Math.min(i++, codes.length - 1)]!
}

describe('codes', () => {
  it('issues distinct codes of 8 characters of [0-9A-Za-z] by default', async () => {
    const { service } = setup()
    const { created } = await service.batch(personal, Array.from({ length: 50 }, () => valid))
    expect(created.every((r) => /^[0-9A-Za-z]{8}$/.test(r.code))).toBe(true)
    expect(new Set(created.map((r) => r.code)).size).toBe(50)
  })

  it('never issues a malformed draw or a route word, in any case', async () => {
    const { service } = setup({ newCode: scripted('short', 'has-dash1', 'analytics', 'ANALYTICS', 'Good1234') })
    expect((await service.create(personal, valid)).created[0]!.code).toBe('Good1234')
  })

  it('draws again when a code repeats within one batch', async () => {
    const { service } = setup({ newCode: scripted('Same0001', 'Same0001', 'Other002') })
    expect((await service.batch(personal, [valid, valid])).created.map((r) => r.code)).toEqual(['Same0001', 'Other002'])
  })

  it('retries with fresh codes when the store reports a code as taken by another library', async () => {
    const { service, calls } = setup({ newCode: scripted('Taken001', 'Taken001', 'Fresh001') })
    await service.create(writer, valid)
    const { created } = await service.create(personal, valid)
    expect(created[0]!.code).toBe('Fresh001')
    expect(calls.insertMany).toBe(3)
  })

  it('never issues the code of a soft-deleted record again', async () => {
    const { service } = setup({ newCode: scripted('Gone0001', 'Gone0001', 'Next0001') })
    await service.create(personal, valid)
    await service.delete(personal, 'Gone0001')
    expect((await service.create(personal, valid)).created[0]!.code).toBe('Next0001')
    expect(await failure(service.get(personal, 'Gone0001'))).toEqual(notFound('Gone0001'))
  })

  it(`gives up with an internal error after ${INSERT_ATTEMPTS} taken codes, storing nothing`, async () => {
    const { service, calls } = setup({ newCode: scripted('Always01') })
    await service.create(personal, valid)
    expect(await failure(service.create(personal, { ...valid, name: 'second' }))).toEqual({ code: 'internal', message: 'could not issue a unique code' })
    expect(calls.insertMany).toBe(1 + INSERT_ATTEMPTS)
    expect((await service.list(personal, {})).dynqrcodes.map((r) => r.name)).toEqual(['Menu'])
  })

  it('gives up when the generator never draws an issuable code', async () => {
    const { service } = setup({ newCode: () => 'export' })
    expect(await failure(service.create(personal, valid))).toEqual({ code: 'internal', message: 'could not draw a new code' })
  })

  for (const code of ['abc', 'x'.repeat(33), 'has space1', '../../etc', 'abc%2F1234', 'analytics', 'export', 'batch']) {
    it(`answers not_found for the malformed code ${JSON.stringify(code)} without touching the store`, async () => {
      const { service, calls } = setup()
      expect(await failure(service.get(personal, code))).toEqual(notFound(code))
      expect(await failure(service.update(personal, code, { name: 'x' }))).toEqual(notFound(code))
      expect(await failure(service.delete(personal, code))).toEqual(notFound(code))
      expect(await service.resolve(code)).toBeNull()
      expect(calls).toEqual({})
    })
  }
})
