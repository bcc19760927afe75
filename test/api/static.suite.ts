import { beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember, type Libraries, seedLibraries } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

const item = (n: number | string) => ({ url: `https://example.com/${n}`, name: `Code ${n}` })

/** Static QR codes through the API (docs/decisions.md §3, §4, §7); large rows: large-rows.suite.ts. */
export function staticSuite(stack: () => Stack) {
  describe('static QR codes', () => {
    let lib: Libraries
    const api = (method: string, path: string, key: string, body?: unknown) => call(stack(), method, path, { key, body })
    const create = (key: string, body: unknown = item('x')) => api('POST', '/v1/qrcodes', key, body)
    const listAll = async (key: string) => (await api('GET', '/v1/qrcodes?limit=1000', key)).body.qrcodes as any[]

    beforeAll(async () => {
      lib = await seedLibraries(stack())
    }, 60_000)

    describe('create', () => {
      it('creates a record in the personal library as active with every field', async () => {
        const res = await create(lib.alice.key, { url: 'https://example.com/a', name: '  Menu  ' })
        expect(res.status).toBe(201)
        expect(res.body.created).toHaveLength(1)
        const [record] = res.body.created
        expect(record).toEqual({
          qr_id: expect.stringMatching(/^qr_/),
          url: 'https://example.com/a',
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

      it('stores and returns the style object', async () => {
        const res = await create(lib.alice.key, { ...item('styled'), style: { fg: '#000', dots: { shape: 'round' } } })
        expect(res.status).toBe(201)
        expect(res.body.created[0].style).toEqual({ fg: '#000', dots: { shape: 'round' } })
      })

      it('creates a draft in the team library with team_id and the writer as created_by', async () => {
        const res = await create(lib.teamWriter.key)
        expect(res.status).toBe(201)
        expect(res.body.created[0]).toMatchObject({ status: 'draft', team_id: lib.team_id, created_by: lib.teamWriter.account_id })
      })
    })

    describe('batch', () => {
      it('creates every item in the order sent with the fields of a single create', async () => {
        const res = await api('POST', '/v1/qrcodes/batch', lib.bob.key, { qrcodes: [item('b1'), item('b2'), item('b3')] })
        expect(res.status).toBe(201)
        expect(res.body.created.map((r: any) => r.name)).toEqual(['Code b1', 'Code b2', 'Code b3'])
        for (const record of res.body.created) expect(Object.keys(record).sort()).toEqual(['created_at', 'created_by', 'name', 'qr_id', 'status', 'style', 'tags', 'team_id', 'updated_at', 'url'])
      })

      it('accepts exactly 50 items', async () => {
        const res = await api('POST', '/v1/qrcodes/batch', lib.adminPersonal.key, { qrcodes: Array.from({ length: 50 }, (_, i) => item(i)) })
        expect(res.status).toBe(201)
        expect(res.body.created).toHaveLength(50)
      })

      it('rejects 51 items with 400 and creates nothing', async () => {
        const before = (await listAll(lib.bob.key)).length
        const res = await api('POST', '/v1/qrcodes/batch', lib.bob.key, { qrcodes: Array.from({ length: 51 }, (_, i) => item(i)) })
        expect(res.status).toBe(400)
        expect(res.body).toEqual({ error: expect.stringContaining('50') })
        expect(await listAll(lib.bob.key)).toHaveLength(before)
      })

      it('rejects an empty batch, a batch that is not an array and a bare array', async () => {
        for (const body of [{ qrcodes: [] }, { qrcodes: 'x' }, {}, [item(1)]]) {
          const res = await api('POST', '/v1/qrcodes/batch', lib.bob.key, body)
          expect(res.status).toBe(400)
          expect(res.body).toEqual({ error: expect.any(String) })
        }
      })

      it('creates every item of a business key\'s batch as a draft of the team library, by the key\'s owner', async () => {
        const res = await api('POST', '/v1/qrcodes/batch', lib.teamWriter.key, { qrcodes: [item('t1'), item('t2')] })
        expect(res.status).toBe(201)
        expect(res.body.created.map((r: any) => [r.status, r.team_id, r.created_by])).toEqual([1, 2].map(() => ['draft', lib.team_id, lib.teamWriter.account_id]))
      })

      it('names every failing item by index and creates nothing', async () => {
        const before = (await listAll(lib.bob.key)).length
        const res = await api('POST', '/v1/qrcodes/batch', lib.bob.key, {
          qrcodes: [item(1), { url: 'not a url', name: 'x' }, item(3), { url: 'https://ok.example' }, { ...item(5), qr_id: 'mine' }],
        })
        expect(res.status).toBe(400)
        expect(res.body).toEqual({
          errors: [
            { index: 1, error: expect.stringContaining('url') },
            { index: 3, error: expect.stringContaining('name') },
            { index: 4, error: expect.stringContaining('qr_id') },
          ],
        })
        expect(await listAll(lib.bob.key)).toHaveLength(before)
      })

      it('creates no duplicates when the fixed batch is retried', async () => {
        const before = (await listAll(lib.bob.key)).length
        const bad = await api('POST', '/v1/qrcodes/batch', lib.bob.key, { qrcodes: [item('r1'), { url: 'x', name: 'r2' }] })
        expect(bad.status).toBe(400)
        const fixed = await api('POST', '/v1/qrcodes/batch', lib.bob.key, { qrcodes: [item('r1'), item('r2')] })
        expect(fixed.status).toBe(201)
        expect(await listAll(lib.bob.key)).toHaveLength(before + 2)
      })
    })

    describe('list', () => {
      it('walks every record exactly once, oldest first, page by page', async () => {
        const own = await freshMember(stack())
        const made = (await api('POST', '/v1/qrcodes/batch', own.key, { qrcodes: Array.from({ length: 7 }, (_, i) => item(i)) })).body.created
        const seen: string[] = []
        let cursor: string | null = null
        let pages = 0
        do {
          const res: any = await api('GET', `/v1/qrcodes?limit=3${cursor ? `&cursor=${cursor}` : ''}`, own.key)
          expect(res.status).toBe(200)
          expect(res.body.qrcodes.length).toBeLessThanOrEqual(3)
          seen.push(...res.body.qrcodes.map((r: any) => r.qr_id))
          cursor = res.body.next_cursor
          pages++
        } while (cursor)
        expect(seen).toEqual(made.map((r: any) => r.qr_id))
        expect(pages).toBe(3)
      })

      it('answers 100 records a page when no limit is given', async () => {
        const own = await freshMember(stack())
        for (const size of [50, 50, 1]) expect((await api('POST', '/v1/qrcodes/batch', own.key, { qrcodes: Array.from({ length: size }, (_, i) => item(i)) })).status).toBe(201)
        const first = await api('GET', '/v1/qrcodes', own.key)
        expect([first.status, first.body.qrcodes.length, typeof first.body.next_cursor]).toEqual([200, 100, 'string'])
        const rest = await api('GET', `/v1/qrcodes?cursor=${first.body.next_cursor}`, own.key)
        expect([rest.body.qrcodes.length, rest.body.next_cursor]).toEqual([1, null])
      })

      it('filters by updated_since', async () => {
        const own = await freshMember(stack())
        const [old] = (await create(own.key, item('old'))).body.created
        const res = await api('GET', `/v1/qrcodes?updated_since=${old.updated_at + 3600}`, own.key)
        expect(res.status).toBe(200)
        expect(res.body).toEqual({ qrcodes: [], next_cursor: null })
        const all = await api('GET', `/v1/qrcodes?updated_since=${old.updated_at}`, own.key)
        expect(all.body.qrcodes.map((r: any) => r.qr_id)).toEqual([old.qr_id])
      })

      it('answers 400 for a bad limit, cursor, updated_since or unknown parameter', async () => {
        for (const query of ['limit=0', 'limit=1001', 'limit=ten', 'cursor=%%%', 'cursor=bm90LWhleA', 'updated_since=-1', 'updated_since=yesterday', 'sort=size', 'order=name']) {
          const res = await api('GET', `/v1/qrcodes?${query}`, lib.alice.key)
          expect(res.status, query).toBe(400)
          expect(res.body, query).toEqual({ error: expect.any(String) })
        }
      })
    })

    describe('get, patch, delete', () => {
      it('fetches one record by qr_id', async () => {
        const [record] = (await create(lib.alice.key)).body.created
        const res = await api('GET', `/v1/qrcodes/${record.qr_id}`, lib.alice.key)
        expect(res.status).toBe(200)
        expect(res.body).toEqual(record)
      })

      it('renames a record and moves updated_at forward', async () => {
        const [record] = (await create(lib.alice.key)).body.created
        const res = await api('PATCH', `/v1/qrcodes/${record.qr_id}`, lib.alice.key, { name: 'Renamed', style: { c: 1 } })
        expect(res.status).toBe(200)
        expect(res.body).toMatchObject({ qr_id: record.qr_id, name: 'Renamed', style: { c: 1 }, url: record.url })
        expect(res.body.updated_at).toBeGreaterThanOrEqual(record.updated_at)
        expect((await api('GET', `/v1/qrcodes/${record.qr_id}`, lib.alice.key)).body.name).toBe('Renamed')
      })

      it('rejects an empty PATCH, an unknown field and a bad status with 400, changing nothing', async () => {
        const [record] = (await create(lib.alice.key)).body.created
        for (const body of [{}, { qr_id: 'x' }, { status: 'archived' }, { url: 'ftp://x.example' }, { name: '' }]) {
          const res = await api('PATCH', `/v1/qrcodes/${record.qr_id}`, lib.alice.key, body)
          expect(res.status, JSON.stringify(body)).toBe(400)
          expect(res.body).toEqual({ error: expect.any(String) })
        }
        expect((await api('GET', `/v1/qrcodes/${record.qr_id}`, lib.alice.key)).body).toEqual(record)
      })

      it('lets a team admin approve a draft and refuses a writer with 403', async () => {
        const [draft] = (await create(lib.teamWriter.key)).body.created
        const refused = await api('PATCH', `/v1/qrcodes/${draft.qr_id}`, lib.teamWriter.key, { status: 'active' })
        expect(refused.status).toBe(403)
        expect(refused.body.error).toContain('admin')
        expect((await api('GET', `/v1/qrcodes/${draft.qr_id}`, lib.teamWriter.key)).body.status).toBe('draft')
        const approved = await api('PATCH', `/v1/qrcodes/${draft.qr_id}`, lib.teamAdmin.key, { status: 'active' })
        expect(approved.status).toBe(200)
        expect(approved.body.status).toBe('active')
      })

      it('deletes a record, after which it is 404', async () => {
        const [record] = (await create(lib.alice.key)).body.created
        const res = await api('DELETE', `/v1/qrcodes/${record.qr_id}`, lib.alice.key)
        expect(res.status).toBe(200)
        expect(res.body).toEqual({ deleted: record.qr_id })
        const again = await api('GET', `/v1/qrcodes/${record.qr_id}`, lib.alice.key)
        expect(again.status).toBe(404)
        expect(again.body).toEqual({ error: expect.any(String) })
        expect((await api('DELETE', `/v1/qrcodes/${record.qr_id}`, lib.alice.key)).status).toBe(404)
      })
    })

    describe('libraries', () => {
      it('answers 404 on every route for a record of another library', async () => {
        const [personal] = (await create(lib.alice.key)).body.created
        const [team] = (await create(lib.teamWriter.key)).body.created
        const attempts: [string, string][] = [
          [personal.qr_id, lib.bob.key], [personal.qr_id, lib.teamAdmin.key],
          [team.qr_id, lib.alice.key], [team.qr_id, lib.adminPersonal.key],
        ]
        for (const [id, key] of attempts) {
          for (const [method, body] of [['GET'], ['PATCH', { name: 'stolen' }], ['DELETE']] as const) {
            const res = await api(method, `/v1/qrcodes/${id}`, key, body)
            expect(res.status, `${method} ${id}`).toBe(404)
            expect(res.body).toEqual({ error: expect.any(String) })
          }
        }
        expect((await api('GET', `/v1/qrcodes/${personal.qr_id}`, lib.alice.key)).body.name).toBe(personal.name)
      })

      it('never lists or exports another library\'s records', async () => {
        const [mine] = (await create(lib.bob.key, item('bob-only'))).body.created
        const others = [lib.alice, lib.teamAdmin, lib.adminPersonal]
        for (const member of others) {
          expect((await listAll(member.key)).map((r) => r.qr_id)).not.toContain(mine.qr_id)
          expect((await api('GET', '/v1/qrcodes/export', member.key)).text).not.toContain(mine.qr_id)
        }
      })

      it('shares the team library between its admin and writer', async () => {
        const [draft] = (await create(lib.teamWriter.key, item('shared'))).body.created
        expect((await listAll(lib.teamAdmin.key)).map((r) => r.qr_id)).toContain(draft.qr_id)
      })
    })

    describe('export', () => {
      it('streams every record as CSV with the contract columns', async () => {
        const own = await freshMember(stack())
        const made = (await api('POST', '/v1/qrcodes/batch', own.key, {
          qrcodes: [{ ...item(1), style: { a: 'b' } }, { url: 'https://example.com/q', name: '=HYPERLINK("evil"), "quoted"' }],
        })).body.created
        const res = await api('GET', '/v1/qrcodes/export', own.key)
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8')
        expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename=".+\.csv"$/)
        const lines = res.text.split('\r\n')
        expect(lines[0]).toBe('qr_id,name,url,status,team_id,created_by,style,created_at,updated_at,tags')
        expect(lines[1]).toBe(`${made[0].qr_id},Code 1,https://example.com/1,active,,${own.account_id},"{""a"":""b""}",${made[0].created_at},${made[0].updated_at},`)
        expect(lines[2]).toBe(`${made[1].qr_id},"'=HYPERLINK(""evil""), ""quoted""",https://example.com/q,active,,${own.account_id},{},${made[1].created_at},${made[1].updated_at},`)
        expect(lines.slice(3)).toEqual([''])
      })

      it('exports only the header for an empty library', async () => {
        const own = await freshMember(stack())
        const res = await api('GET', '/v1/qrcodes/export', own.key)
        expect(res.status).toBe(200)
        expect(res.text).toBe('qr_id,name,url,status,team_id,created_by,style,created_at,updated_at,tags\r\n')
      })
    })
  })
}
