import { beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember, type Libraries, seedLibraries } from '../harness/fixtures'
import type { Stack } from '../harness/stack'
import type { CreateRoute } from './idempotency.suite'

const item = (n: number | string) => ({ destination_url: `https://example.com/${n}`, name: `Code ${n}` })
/** The dynamic create routes, for the shared Idempotency-Key checks (idempotency.suite.ts). */
export const DYNAMIC_CREATES: CreateRoute[] = [
  { name: 'POST /v1/dynqrcodes', path: '/v1/dynqrcodes', body: (n) => item(n), count: countDynamic },
  { name: 'POST /v1/dynqrcodes/batch', path: '/v1/dynqrcodes/batch', body: (n) => [item(`${n}a`), item(`${n}b`)], count: countDynamic },
]

async function countDynamic(stack: Stack, key: string) {
  return (await call(stack, 'GET', '/v1/dynqrcodes?limit=1000', { key })).body.dynqrcodes.length
}

const HEADER = 'code,short_url,destination_url,name,status,team_id,created_by,style,created_at,updated_at,tags'

/** Dynamic QR codes through the API (docs/decisions.md §3, §4, §7). */
export function dynamicSuite(stack: () => Stack) {
  describe('dynamic QR codes', () => {
    let lib: Libraries
    const api = (method: string, path: string, key: string, body?: unknown) => call(stack(), method, path, { key, body })
    const create = (key: string, body: unknown = item('x')) => api('POST', '/v1/dynqrcodes', key, body)
    const listAll = async (key: string, query = '') => (await api('GET', `/v1/dynqrcodes?limit=1000${query}`, key)).body.dynqrcodes as any[]

    beforeAll(async () => {
      lib = await seedLibraries(stack())
    })

    describe('create', () => {
      it('creates a code in the personal library as active with every field and its short_url', async () => {
        const res = await create(lib.alice.key, { destination_url: 'https://example.com/a', name: '  Menu  ' })
        expect(res.status).toBe(201)
        const [record] = res.body.created
        expect(res.body.created).toHaveLength(1)
        expect(record).toEqual({
          code: expect.stringMatching(/^[0-9A-Za-z]{7,}$/),
          short_url: `${stack().env.SHORT_BASE_URL}/${record.code}`,
          destination_url: 'https://example.com/a',
          name: 'Menu',
          style: {},
          tags: [],
          status: 'active',
          team_id: null,
          created_by: lib.alice.account_id,
          created_at: expect.any(Number),
          updated_at: record.created_at,
        })
        expect(Math.abs(record.created_at - Date.now() / 1000)).toBeLessThan(5)
      })

      it('creates a draft in the team library with team_id and the writer as created_by', async () => {
        const res = await create(lib.teamWriter.key, { ...item('team'), style: { fg: '#000' } })
        expect(res.status).toBe(201)
        expect(res.body.created[0]).toMatchObject({ status: 'draft', team_id: lib.team_id, created_by: lib.teamWriter.account_id, style: { fg: '#000' } })
      })

      it('rejects a bad destination, a missing name and a field of its own choosing with 400', async () => {
        const bodies = [
          { destination_url: 'ftp://example.com/f', name: 'x' }, { destination_url: 'https://', name: 'x' },
          { destination_url: `https://example.com/${'x'.repeat(2029)}`, name: 'x' }, { destination_url: 'https://example.com/' },
          { ...item(1), code: 'mine1234' }, { ...item(1), status: 'active' },
        ]
        for (const body of bodies) {
          const res = await create(lib.alice.key, body)
          expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400)
          expect(res.body).toEqual({ error: expect.any(String) })
        }
      })
    })

    describe('batch', () => {
      it('creates a bare array and a {"dynqrcodes"} object alike, in the order sent', async () => {
        for (const body of [[item('a1'), item('a2')], { dynqrcodes: [item('o1'), item('o2')] }]) {
          const res = await api('POST', '/v1/dynqrcodes/batch', lib.bob.key, body)
          expect(res.status).toBe(201)
          expect(res.body.created.map((r: any) => r.name)).toEqual(Array.isArray(body) ? ['Code a1', 'Code a2'] : ['Code o1', 'Code o2'])
          for (const record of res.body.created) expect(Object.keys(record).sort()).toEqual(['code', 'created_at', 'created_by', 'destination_url', 'name', 'short_url', 'status', 'style', 'tags', 'team_id', 'updated_at'])
        }
      })

      it('accepts exactly 50 items and rejects 51 with 400, creating nothing', async () => {
        const own = await freshMember(stack())
        const fifty = Array.from({ length: 50 }, (_, i) => item(i))
        expect((await api('POST', '/v1/dynqrcodes/batch', own.key, [...fifty, item(50)])).status).toBe(400)
        expect(await listAll(own.key)).toEqual([])
        const res = await api('POST', '/v1/dynqrcodes/batch', own.key, fifty)
        expect([res.status, res.body.created.length, new Set(res.body.created.map((r: any) => r.code)).size]).toEqual([201, 50, 50])
      })

      it('rejects an empty batch, a non-array and the static key with one 400', async () => {
        for (const body of [[], { dynqrcodes: [] }, { dynqrcodes: 'x' }, {}, { qrcodes: [item(1)] }]) {
          const res = await api('POST', '/v1/dynqrcodes/batch', lib.bob.key, body)
          expect(res.status, JSON.stringify(body)).toBe(400)
          expect(res.body).toEqual({ error: expect.any(String) })
        }
      })

      it('creates every item of a business key\'s batch as a draft of the team library, by the key\'s owner', async () => {
        const res = await api('POST', '/v1/dynqrcodes/batch', lib.teamAdmin.key, { dynqrcodes: [item('t1'), item('t2')] })
        expect(res.status).toBe(201)
        expect(res.body.created.map((r: any) => [r.status, r.team_id, r.created_by])).toEqual([1, 2].map(() => ['draft', lib.team_id, lib.teamAdmin.account_id]))
      })

      it('names every failing item by index and creates nothing; the fixed retry creates each once', async () => {
        const own = await freshMember(stack())
        const res = await api('POST', '/v1/dynqrcodes/batch', own.key, [item(1), { destination_url: 'nope', name: 'x' }, item(3), { destination_url: 'https://ok.example' }])
        expect(res.status).toBe(400)
        expect(res.body).toEqual({ errors: [{ index: 1, error: expect.stringContaining('destination_url') }, { index: 3, error: expect.stringContaining('name') }] })
        expect(await listAll(own.key)).toEqual([])
        expect((await api('POST', '/v1/dynqrcodes/batch', own.key, [item(1), item(2), item(3), item(4)])).status).toBe(201)
        expect((await listAll(own.key)).map((r) => r.name)).toEqual(['Code 1', 'Code 2', 'Code 3', 'Code 4'])
      })
    })

    describe('list', () => {
      it('walks every code exactly once, oldest first, page by page', async () => {
        const own = await freshMember(stack())
        const made = (await api('POST', '/v1/dynqrcodes/batch', own.key, Array.from({ length: 7 }, (_, i) => item(i)))).body.created
        const seen: string[] = []
        let cursor: string | null = null
        do {
          const res: any = await api('GET', `/v1/dynqrcodes?limit=3${cursor ? `&cursor=${cursor}` : ''}`, own.key)
          expect(res.status).toBe(200)
          seen.push(...res.body.dynqrcodes.map((r: any) => r.code))
          cursor = res.body.next_cursor
        } while (cursor)
        expect(seen).toEqual(made.map((r: any) => r.code))
      })

      it('answers 100 codes a page when no limit is given', async () => {
        const own = await freshMember(stack())
        for (const size of [50, 50, 1]) expect((await api('POST', '/v1/dynqrcodes/batch', own.key, Array.from({ length: size }, (_, i) => item(i)))).status).toBe(201)
        const first = await api('GET', '/v1/dynqrcodes', own.key)
        expect([first.status, first.body.dynqrcodes.length, typeof first.body.next_cursor]).toEqual([200, 100, 'string'])
        const rest = await api('GET', `/v1/dynqrcodes?cursor=${first.body.next_cursor}`, own.key)
        expect([rest.body.dynqrcodes.length, rest.body.next_cursor]).toEqual([1, null])
      })

      it('filters by status and by updated_since', async () => {
        const [draft] = (await create(lib.teamWriter.key, item('d'))).body.created
        const [approved] = (await create(lib.teamWriter.key, item('a'))).body.created
        await api('PATCH', `/v1/dynqrcodes/${approved.code}`, lib.teamAdmin.key, { status: 'active' })
        const drafts = (await listAll(lib.teamAdmin.key, '&status=draft')).map((r) => r.code)
        const actives = (await listAll(lib.teamAdmin.key, '&status=active')).map((r) => r.code)
        expect([drafts.includes(draft.code), drafts.includes(approved.code), actives.includes(approved.code)]).toEqual([true, false, true])
        expect(await listAll(lib.teamAdmin.key, `&updated_since=${approved.updated_at + 3600}`)).toEqual([])
      })

      it('answers 400 for a bad status, limit, cursor or unknown parameter', async () => {
        for (const query of ['status=archived', 'status=', 'limit=0', 'cursor=%%%', 'updated_since=-1', 'sort=size', 'order=name']) {
          const res = await api('GET', `/v1/dynqrcodes?${query}`, lib.alice.key)
          expect(res.status, query).toBe(400)
          expect(res.body, query).toEqual({ error: expect.any(String) })
        }
      })
    })

    describe('get, patch, delete', () => {
      it('fetches one code, and changes destination, name and style with PATCH', async () => {
        const [record] = (await create(lib.alice.key)).body.created
        expect((await api('GET', `/v1/dynqrcodes/${record.code}`, lib.alice.key)).body).toEqual(record)
        const res = await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.alice.key, { destination_url: 'https://new.example/', name: 'Renamed', style: { c: 1 } })
        expect(res.status).toBe(200)
        expect(res.body).toEqual({ ...record, destination_url: 'https://new.example/', name: 'Renamed', style: { c: 1 }, updated_at: expect.any(Number) })
        expect((await api('GET', `/v1/dynqrcodes/${record.code}`, lib.alice.key)).body).toEqual(res.body)
      })

      it('rejects an empty PATCH, an unknown field, a bad status or destination with 400, changing nothing', async () => {
        const [record] = (await create(lib.alice.key)).body.created
        for (const body of [{}, { code: 'Other123' }, { short_url: 'x' }, { status: 'deleted' }, { destination_url: 'mailto:a@b.c' }]) {
          const res = await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.alice.key, body)
          expect(res.status, JSON.stringify(body)).toBe(400)
          expect(res.body).toEqual({ error: expect.any(String) })
        }
        expect((await api('GET', `/v1/dynqrcodes/${record.code}`, lib.alice.key)).body).toEqual(record)
      })

      it('lets a team admin approve a draft and refuses a writer with 403 naming the rule', async () => {
        const [draft] = (await create(lib.teamWriter.key)).body.created
        const refused = await api('PATCH', `/v1/dynqrcodes/${draft.code}`, lib.teamWriter.key, { status: 'active' })
        expect(refused.status).toBe(403)
        expect(refused.body.error).toContain('only a team admin can approve a draft')
        expect((await api('GET', `/v1/dynqrcodes/${draft.code}`, lib.teamWriter.key)).body.status).toBe('draft')
        const approved = await api('PATCH', `/v1/dynqrcodes/${draft.code}`, lib.teamAdmin.key, { status: 'active' })
        expect([approved.status, approved.body.status]).toEqual([200, 'active'])
      })

      it('soft-deletes a code: {"deleted"}, then 404 on every route, gone from the list and the export', async () => {
        const [record] = (await create(lib.alice.key)).body.created
        const res = await api('DELETE', `/v1/dynqrcodes/${record.code}`, lib.alice.key)
        expect([res.status, res.body]).toEqual([200, { deleted: record.code }])
        for (const [method, body] of [['GET'], ['PATCH', { name: 'back' }], ['DELETE']] as const) {
          const again = await api(method, `/v1/dynqrcodes/${record.code}`, lib.alice.key, body)
          expect([again.status, again.body], method).toEqual([404, { error: expect.any(String) }])
        }
        expect((await listAll(lib.alice.key)).map((r) => r.code)).not.toContain(record.code)
        expect((await api('GET', '/v1/dynqrcodes/export', lib.alice.key)).text).not.toContain(record.code)
      })

      it('answers 404 for malformed codes, and 405 for a route word (its path has routes of its own)', async () => {
        for (const code of ['abc', 'x'.repeat(40), 'abc-defg', 'metrics']) {
          const res = await api('GET', `/v1/dynqrcodes/${code}`, lib.alice.key)
          expect([res.status, res.body], code).toEqual([404, { error: expect.any(String) }])
        }
        const word = await api('GET', '/v1/dynqrcodes/batch', lib.alice.key)
        expect([word.status, word.headers.get('allow')]).toEqual([405, 'POST, OPTIONS'])
      })
    })

    describe('libraries', () => {
      it('answers 404 on every route for a code of another library', async () => {
        const [personal] = (await create(lib.alice.key)).body.created
        const [team] = (await create(lib.teamWriter.key)).body.created
        const attempts: [string, string][] = [
          [personal.code, lib.bob.key], [personal.code, lib.teamAdmin.key], [team.code, lib.alice.key], [team.code, lib.adminPersonal.key],
        ]
        for (const [code, key] of attempts) {
          for (const [method, body] of [['GET'], ['PATCH', { status: 'active' }], ['DELETE']] as const) {
            const res = await api(method, `/v1/dynqrcodes/${code}`, key, body)
            expect([res.status, res.body], `${method} ${code}`).toEqual([404, { error: expect.any(String) }])
          }
          // Its scan history too: the breakdown and the scan export.
          for (const path of [`/v1/dynqrcodes/${code}/analytics`, `/v1/dynqrcodes/${code}/analytics/export`]) {
            const res = await api('GET', path, key)
            expect([res.status, res.body], path).toEqual([404, { error: expect.any(String) }])
          }
        }
        expect((await api('GET', `/v1/dynqrcodes/${team.code}`, lib.teamAdmin.key)).body).toEqual(team)
        for (const [code, key] of [[personal.code, lib.alice.key], [team.code, lib.teamAdmin.key]]) {
          expect((await api('GET', `/v1/dynqrcodes/${code}/analytics`, key!)).body).toMatchObject({ code, total_scans: 0 })
        }
        const summaries = await Promise.all([lib.teamAdmin, lib.alice, lib.adminPersonal].map(async (member) => (await api('GET', '/v1/dynqrcodes/analytics', member.key)).body.analytics.map((a: any) => a.code)))
        expect(summaries.map((codes) => [codes.includes(personal.code), codes.includes(team.code)])).toEqual([[false, true], [true, false], [false, false]])
      })

      it('never lists or exports another library\'s codes, and shares the team library', async () => {
        const [mine] = (await create(lib.teamWriter.key, item('team-only'))).body.created
        for (const member of [lib.alice, lib.bob, lib.adminPersonal]) {
          expect((await listAll(member.key)).map((r) => r.code)).not.toContain(mine.code)
          expect((await api('GET', '/v1/dynqrcodes/export', member.key)).text).not.toContain(mine.code)
        }
        expect((await listAll(lib.teamAdmin.key)).map((r) => r.code)).toContain(mine.code)
      })
    })

    describe('export', () => {
      it('streams every live code as CSV with the contract columns', async () => {
        const own = await freshMember(stack())
        const made = (await api('POST', '/v1/dynqrcodes/batch', own.key, [{ ...item(1), style: { a: 'b' } }, { destination_url: 'https://example.com/q', name: '@SUM(A1), "q"' }])).body.created
        const res = await api('GET', '/v1/dynqrcodes/export', own.key)
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
        expect(res.headers.get('content-disposition')).toBe('attachment; filename="dynqrcodes.csv"')
        const [a, b] = made
        expect(res.text.split('\r\n')).toEqual([
          HEADER,
          `${a.code},${a.short_url},https://example.com/1,Code 1,active,,${own.account_id},"{""a"":""b""}",${a.created_at},${a.updated_at},`,
          `${b.code},${b.short_url},https://example.com/q,"'@SUM(A1), ""q""",active,,${own.account_id},{},${b.created_at},${b.updated_at},`,
          '',
        ])
      })

      it('exports only the header for an empty library', async () => {
        const own = await freshMember(stack())
        expect((await api('GET', '/v1/dynqrcodes/export', own.key)).text).toBe(`${HEADER}\r\n`)
      })
    })

    it('documents every dynamic route in the OpenAPI document', async () => {
      const paths = (await call(stack(), 'GET', '/docs/json')).body.paths
      expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/v1/dynqrcodes', '/v1/dynqrcodes/batch', '/v1/dynqrcodes/export', '/v1/dynqrcodes/{code}']))
      expect(Object.keys(paths['/v1/dynqrcodes']).sort()).toEqual(['get', 'post'])
      expect(Object.keys(paths['/v1/dynqrcodes/{code}']).sort()).toEqual(['delete', 'get', 'patch'])
    })
  })
}
