import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { AppError, type Bus } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { DYNAMIC_SUBJECTS } from '@lr/proto'
import { createBusCodeDirectory } from '../src/adapters/code-directory.bus'
import { alice } from './fixtures'

let bus: Bus
beforeEach(() => {
  bus = createLocalBus()
})
afterEach(() => bus.close())

describe('createBusCodeDirectory', () => {
  it('asks dynamic.v1.codes for one page of the size it wants', async () => {
    const asked: unknown[] = []
    bus.serve(DYNAMIC_SUBJECTS.codes, async (p) => {
      asked.push(p)
      return { codes: ['Code0003'], next_cursor: null }
    })
    expect(await createBusCodeDirectory(bus).liveCodes(alice, { cursor: 'p2', limit: 2 })).toEqual({ codes: ['Code0003'], next_cursor: null })
    expect(asked).toEqual([{ principal: alice, cursor: 'p2', limit: 2 }])
  })

  it('answers the status of a code of the library, and null for a not_found', async () => {
    bus.serve(DYNAMIC_SUBJECTS.find, async (p) => {
      const { id } = p as { id: string }
      if (id === 'Gone0001') return { code: id, deleted: true }
      throw new AppError('not_found', 'no such code')
    })
    const directory = createBusCodeDirectory(bus)
    expect(await directory.find(alice, 'Gone0001')).toEqual({ code: 'Gone0001', deleted: true })
    expect(await directory.find(alice, 'Nope0001')).toBeNull()
  })

  it('lets a transport failure through, so the caller answers 503 rather than 404', async () => {
    const error = await createBusCodeDirectory(bus).find(alice, 'Code0001').catch((e) => e)
    expect([error instanceof AppError, (error as AppError).code]).toEqual([true, 'unavailable'])
  })
})
