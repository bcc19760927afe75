import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqlite } from '@lr/platform/sqlite'
import { UNCHANGED_TEXT } from '@lr/platform/kept-list'
import { createSqliteDynamicStore } from '../src/adapters/dynamic-store.sqlite'
import { createDynamicService } from '../src/service'
import { countingStore, otherPersonal, personal, setup, SHORT, T0 } from './fixtures'

const listed = async (service: ReturnType<typeof setup>['service'], query: Record<string, string> = {}) => JSON.parse(await service.listJson(personal, query))
const namesIn = (reply: { dynqrcodes: { name: string }[] }) => reply.dynqrcodes.map((r) => r.name)

describe('list replies kept while the library does not change', () => {
  it('answers the JSON text of list, and a second time without reading the page again', async () => {
    const { service, calls } = setup()
    await service.batch(personal, [{ destination_url: 'https://e.example/1', name: 'one' }, { destination_url: 'https://e.example/2', name: 'two' }])
    const first = await service.listJson(personal, { limit: '10' })
    expect(first).toBe(JSON.stringify(await service.list(personal, { limit: '10' })))
    const reads = calls.list
    expect(await service.listJson(personal, { limit: '10' })).toBe(first)
    expect(calls.list).toBe(reads)
  })

  it('reads again after a create, an update or a delete in the library, and shows it', async () => {
    const { service } = setup()
    const [a] = (await service.create(personal, { destination_url: 'https://e.example/a', name: 'a' })).created
    expect(namesIn(await listed(service))).toEqual(['a'])
    await service.create(personal, { destination_url: 'https://e.example/b', name: 'b' })
    expect(namesIn(await listed(service))).toEqual(['a', 'b'])
    await service.update(personal, a!.code, { name: 'a2' })
    expect(namesIn(await listed(service))).toEqual(['a2', 'b'])
    await service.delete(personal, a!.code)
    expect(namesIn(await listed(service))).toEqual(['b'])
  })

  it('keeps a reply per query: limit, cursor and filters each give their own', async () => {
    const { service } = setup()
    await service.batch(personal, ['x', 'y', 'z'].map((name) => ({ destination_url: 'https://e.example/', name })))
    const page = await listed(service, { limit: '2' })
    expect(namesIn(page)).toEqual(['x', 'y'])
    expect(namesIn(await listed(service, { limit: '2', cursor: page.next_cursor }))).toEqual(['z'])
    expect(namesIn(await listed(service, { limit: '3' }))).toEqual(['x', 'y', 'z'])
    expect(namesIn(await listed(service, { limit: '3', status: 'draft' }))).toEqual([])
  })

  it('is not moved by a write in another library', async () => {
    const { service, calls } = setup()
    await service.create(personal, { destination_url: 'https://e.example/a', name: 'a' })
    await service.listJson(personal, {})
    const reads = calls.list
    await service.create(otherPersonal, { destination_url: 'https://e.example/b', name: 'b' })
    expect(namesIn(await listed(service))).toEqual(['a'])
    expect(calls.list).toBe(reads)
  })

  it('never answers a failure from a kept reply: a bad cursor is refused every time', async () => {
    const { service } = setup()
    for (let i = 0; i < 2; i++) await expect(service.listJson(personal, { cursor: 'not-a-cursor-we-issued' })).rejects.toThrow('cursor is not one this API issued')
  })

  describe('with another process writing the same database file', () => {
    let dir: string
    afterEach(() => rmSync(dir, { recursive: true, force: true }))

    it('sees the write at once (the position is read from the store, not remembered)', async () => {
      dir = mkdtempSync(join(tmpdir(), 'lr-list-cache-'))
      const file = join(dir, 'dynamic.sqlite')
      const service = createDynamicService({ store: createSqliteDynamicStore(openSqlite(file)), now: () => T0, shortBaseUrl: SHORT })
      await service.create(personal, { destination_url: 'https://e.example/a', name: 'a' })
      expect(namesIn(await listed(service as never))).toEqual(['a'])
      // The admin command line, or another replica: its own connection to the file.
      const other = createSqliteDynamicStore(openSqlite(file))
      await other.insertMany('acct:acct_a', [{
        code: 'Other001', destination_url: 'https://e.example/o', name: 'from elsewhere', style: {}, tags: [], status: 'active',
        team_id: null, created_by: 'acct_a', created_at: T0, updated_at: T0,
      }])
      expect(namesIn(await listed(service as never))).toEqual(['a', 'from elsewhere'])
    })
  })

  describe('for a gateway that keeps pages (known)', () => {
    const asGateway = async (service: ReturnType<typeof setup>['service'], known: string | null) => {
      const text = await service.listJson(personal, {}, known)
      if (text === UNCHANGED_TEXT) return 'unchanged' as const
      return JSON.parse(text) as { tag: string | null; page: { dynqrcodes: { name: string }[] } }
    }

    it('sends the page with its tag, then unchanged for that tag until a write, then the new page with another', async () => {
      const { service } = setup()
      await service.create(personal, { destination_url: 'https://e.example/a', name: 'a' })
      const first = await asGateway(service, null)
      if (first === 'unchanged') throw new Error('a gateway that holds nothing got unchanged')
      expect(first.page).toEqual(JSON.parse(await service.listJson(personal, {})))
      expect(await asGateway(service, first.tag)).toBe('unchanged')
      expect(await asGateway(service, 'other.tag')).toEqual(first)
      await service.create(personal, { destination_url: 'https://e.example/b', name: 'b' })
      const second = await asGateway(service, first.tag)
      if (second === 'unchanged') throw new Error('unchanged after a write')
      expect([namesIn(second.page), second.tag === first.tag]).toEqual([['a', 'b'], false])
    })

    it('answers unchanged from a service that did not keep the page itself (another replica) when the page is the same', async () => {
      const { service, store } = setup()
      await service.create(personal, { destination_url: 'https://e.example/a', name: 'a' })
      const first = await asGateway(service, null)
      const replica = createDynamicService({ store, now: () => T0, shortBaseUrl: SHORT })
      expect(await asGateway(replica as never, (first as { tag: string }).tag)).toBe('unchanged')
      const elsewhere = createDynamicService({ store, now: () => T0, shortBaseUrl: 'https://other.example' })
      expect(await asGateway(elsewhere as never, (first as { tag: string }).tag)).not.toBe('unchanged')
    })

    it('never answers unchanged from a store without change positions: its tag is null', async () => {
      const { store: inner } = setup()
      const { changePosition: _, ...withoutPositions } = inner
      const service = createDynamicService({ store: withoutPositions, now: () => T0, shortBaseUrl: SHORT })
      await service.create(personal, { destination_url: 'https://e.example/a', name: 'a' })
      const first = await asGateway(service as never, null)
      expect(first).toEqual({ tag: null, page: expect.objectContaining({ dynqrcodes: [expect.objectContaining({ name: 'a' })] }) })
      expect(await asGateway(service as never, null)).toEqual(first)
    })
  })

  it('reads every time from a store without change positions (MongoDB)', async () => {
    const { store: inner } = setup()
    const { changePosition: _, ...withoutPositions } = inner
    const counted = countingStore(withoutPositions)
    const service = createDynamicService({ store: counted.store, now: () => T0, shortBaseUrl: SHORT })
    await service.create(personal, { destination_url: 'https://e.example/a', name: 'a' })
    await service.listJson(personal, {})
    await service.listJson(personal, {})
    expect(counted.calls.list).toBe(2)
  })
})
