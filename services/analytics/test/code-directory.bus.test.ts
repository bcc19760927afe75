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
  it('walks every page of dynamic.v1.codes', async () => {
    const pages: Record<string, { codes: string[]; next_cursor: string | null }> = {
      start: { codes: ['Code0001', 'Code0002'], next_cursor: 'p2' },
      p2: { codes: ['Code0003'], next_cursor: null },
    }
    bus.serve(DYNAMIC_SUBJECTS.codes, async (p) => pages[(p as { cursor: string | null }).cursor ?? 'start'])
    expect(await createBusCodeDirectory(bus).liveCodes(alice)).toEqual(['Code0001', 'Code0002', 'Code0003'])
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
