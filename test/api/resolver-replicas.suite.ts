import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember } from '../harness/fixtures'
import { spawnExtraResolver, type Stack } from '../harness/stack'
import { BROWSER, pathOf, settled } from './short-links.suite'

/** Change events reach every resolver process (NATS only: a second resolver beside the stack's). */
export function resolverReplicasSuite(stack: () => Stack) {
  describe('two resolver processes', () => {
    let second: Awaited<ReturnType<typeof spawnExtraResolver>>
    beforeAll(async () => {
      second = await spawnExtraResolver(stack())
    }, 30_000)
    afterAll(() => second?.stop())

    it('sends the next scan at either resolver to a changed destination, draft and deletion', async () => {
      const own = await freshMember(stack())
      const api = (method: string, path: string, body?: unknown) => call(stack(), method, `/v1/dynqrcodes${path}`, { key: own.key, body })
      const [record] = (await api('POST', '', { destination_url: 'https://old.example/', name: 'Two' })).body.created
      const resolvers = [(p: string) => stack().short(p, { headers: { 'user-agent': BROWSER } }), (p: string) => second.short(p, { headers: { 'user-agent': BROWSER } })]
      // Each resolver answers once, so both hold the code in memory.
      for (const short of resolvers) expect((await short(pathOf(record))).headers.get('location')).toBe('https://old.example/')

      expect((await api('PATCH', `/${record.code}`, { destination_url: 'https://new.example/' })).status).toBe(200)
      for (const short of resolvers) {
        const next = await settled(() => short(pathOf(record)), (r) => r.headers.get('location') === 'https://new.example/', 1000)
        expect([next.status, next.headers.get('location')]).toEqual([302, 'https://new.example/'])
      }

      expect((await api('PATCH', `/${record.code}`, { status: 'draft' })).status).toBe(200)
      for (const short of resolvers) expect((await settled(() => short(pathOf(record)), (r) => r.status === 404, 1000)).status).toBe(404)

      expect((await api('DELETE', `/${record.code}`)).status).toBe(200)
      for (const short of resolvers) expect((await settled(() => short(pathOf(record)), (r) => r.status === 410, 1000)).status).toBe(410)
    })
  })
}
