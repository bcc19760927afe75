import { beforeAll, describe, expect, it } from 'bun:test'
import { LIST_CURSOR_REFUSED } from '@lr/platform/cursor'
import { call } from '../harness/client'
import { freshMember, type Member } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

/** What tells the two kinds apart here. */
interface Kind {
  name: string
  path: string
  listKey: string
  idField: string
  item(n: number | string): Record<string, string>
  /** A PATCH body that changes something. */
  rename: Record<string, string>
}

const KINDS: Kind[] = [
  { name: 'static', path: '/v1/qrcodes', listKey: 'qrcodes', idField: 'qr_id', item: (n) => ({ url: `https://example.com/${n}`, name: `Code ${n}` }), rename: { name: 'Renamed' } },
  { name: 'dynamic', path: '/v1/dynqrcodes', listKey: 'dynqrcodes', idField: 'code', item: (n) => ({ destination_url: `https://example.com/${n}`, name: `Code ${n}` }), rename: { name: 'Renamed' } },
]

/**
 * Keeping another system in sync (docs/decisions.md §4, "Sync", "Versions", "Cursors"):
 * tombstones, no-op PATCHes, ETags and conditional requests, sealed cursors. Both kinds.
 */
export function syncSuite(stack: () => Stack) {
  describe('sync', () => {
    const members: Member[] = []
    let next = 0
    /** A library of its own for each test: a cursor or a list never meets another test's records. */
    const fresh = () => members[next++]!
    const api = (method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>) => call(stack(), method, path, { key, body, headers })

    beforeAll(async () => {
      // 16 libraries, a few at a time: each is two runs of the admin command line.
      for (let i = 0; i < 4; i++) members.push(...(await Promise.all(Array.from({ length: 4 }, () => freshMember(stack())))))
    }, 120_000)

    for (const kind of KINDS) {
      const create = async (key: string, count: number) =>
        (await api('POST', `${kind.path}/batch`, key, kind.name === 'static' ? { qrcodes: Array.from({ length: count }, (_, i) => kind.item(i)) } : Array.from({ length: count }, (_, i) => kind.item(i)))).body.created as any[]
      const idOf = (record: any) => record[kind.idField] as string
      const one = (record: any) => `${kind.path}/${idOf(record)}`
      const list = async (key: string, query: string) => {
        const res = await api('GET', `${kind.path}?${query}`, key)
        expect(res.status, query).toBe(200)
        return res.body as { next_cursor: string | null } & Record<string, any[]>
      }
      /** Every page of a query; `between` runs after each page. */
      async function walk(key: string, query: string, between?: (page: number) => Promise<void>) {
        const seen: any[] = []
        let cursor: string | null = null
        for (let page = 0; page < 50; page++) {
          const body = await list(key, `${query}${cursor ? `&cursor=${cursor}` : ''}`)
          seen.push(...body[kind.listKey]!)
          cursor = body.next_cursor
          if (!cursor) return seen
          await between?.(page)
        }
        throw new Error('paging did not end')
      }

      describe(`${kind.name}: deletions (include_deleted)`, () => {
        it('lists a deleted record as a tombstone with include_deleted=true, and nowhere else', async () => {
          const own = fresh()
          const [gone, kept] = await create(own.key, 2)
          expect((await api('DELETE', one(gone), own.key)).status).toBe(200)
          const body = await list(own.key, 'include_deleted=true')
          const tombstone = body[kind.listKey]!.find((r) => idOf(r) === idOf(gone))
          expect(tombstone).toEqual({ [kind.idField]: idOf(gone), deleted_at: expect.any(Number), updated_at: expect.any(Number) })
          expect(tombstone.updated_at).toBe(tombstone.deleted_at)
          expect(tombstone.deleted_at).toBeGreaterThanOrEqual(gone.updated_at)
          expect(body[kind.listKey]!.find((r) => idOf(r) === idOf(kept))).toEqual(kept)
          expect((await list(own.key, 'limit=100'))[kind.listKey]!.map(idOf)).toEqual([idOf(kept)])
          expect((await list(own.key, 'updated_since=0'))[kind.listKey]!.map(idOf)).toEqual([idOf(kept)])
          expect((await api('GET', one(gone), own.key)).status).toBe(404)
          expect((await api('PATCH', one(gone), own.key, kind.rename)).status).toBe(404)
          expect((await api('DELETE', one(gone), own.key)).status).toBe(404)
          expect((await api('GET', `${kind.path}/export`, own.key)).text).not.toContain(idOf(gone))
        })

        it('returns only the deletions at or after updated_since', async () => {
          const own = fresh()
          const [gone] = await create(own.key, 1)
          await api('DELETE', one(gone), own.key)
          const [tombstone] = (await list(own.key, 'include_deleted=true'))[kind.listKey]!
          expect((await list(own.key, `include_deleted=true&updated_since=${tombstone.deleted_at}`))[kind.listKey]).toEqual([tombstone])
          expect((await list(own.key, `include_deleted=true&updated_since=${tombstone.deleted_at + 1}`))[kind.listKey]).toEqual([])
        })

        it('answers 400 JSON for a bad include_deleted', async () => {
          const own = members[0]!
          for (const value of ['yes', '1', '', 'TRUE', 'toString']) {
            const res = await api('GET', `${kind.path}?include_deleted=${value}`, own.key)
            expect(res.status, value).toBe(400)
            expect(res.body, value).toEqual({ error: expect.stringContaining('include_deleted') })
          }
          expect((await api('GET', `${kind.path}?include_deleted=false`, own.key)).status).toBe(200)
        })

        it('follows the README recipe: a second pass from the last updated_at seen brings changes, new records and deletions', async () => {
          const own = fresh()
          const [a, b, c] = await create(own.key, 3)
          const mirror = new Map<string, any>()
          const apply = (items: any[]) => {
            for (const item of items) item.deleted_at === undefined ? mirror.set(idOf(item), item) : mirror.delete(idOf(item))
          }
          const first = await walk(own.key, 'limit=2&include_deleted=true&updated_since=0')
          apply(first)
          const since = Math.max(...first.map((r) => r.updated_at))
          await api('PATCH', one(a), own.key, kind.rename)
          await api('DELETE', one(b), own.key)
          const [d] = await create(own.key, 1)
          apply(await walk(own.key, `limit=2&include_deleted=true&updated_since=${since}`))
          const truth = (await list(own.key, 'limit=1000'))[kind.listKey]!
          expect([...mirror.values()].sort((x, y) => idOf(x).localeCompare(idOf(y)))).toEqual(truth.sort((x, y) => idOf(x).localeCompare(idOf(y))))
          expect(new Set(mirror.keys())).toEqual(new Set([idOf(a), idOf(c), idOf(d)]))
        })

        it('brings a record again when it changes or is deleted after the client paged past it', async () => {
          const own = fresh()
          const [a, b] = await create(own.key, 3)
          const seen = await walk(own.key, 'limit=1&updated_since=0&include_deleted=true', async (page) => {
            if (page === 0) await api('PATCH', one(a), own.key, kind.rename)
            if (page === 1) await api('DELETE', one(b), own.key)
          })
          expect(seen.map(idOf)).toEqual([idOf(a), idOf(b), idOf(seen[2]), idOf(a), idOf(b)])
          expect(seen[3]).toMatchObject(kind.rename)
          expect(seen[4]).toEqual({ [kind.idField]: idOf(b), deleted_at: expect.any(Number), updated_at: expect.any(Number) })
        })
      })

      describe(`${kind.name}: versions (ETag, If-None-Match, If-Match)`, () => {
        let own: Member
        beforeAll(() => {
          own = fresh() // each test works on records of its own
        })

        it('keeps updated_at and the ETag when a PATCH changes nothing', async () => {
          const [record] = await create(own.key, 1)
          const tag = (await api('GET', one(record), own.key)).headers.get('etag')
          await Bun.sleep(1100) // a new second: a bumped updated_at would show
          const { url, destination_url, name, status, style } = record
          const res = await api('PATCH', one(record), own.key, { ...(url ? { url } : { destination_url }), name, status, style })
          expect(res.status).toBe(200)
          expect(res.body).toEqual(record)
          expect(res.headers.get('etag')).toBe(tag)
          expect((await api('GET', one(record), own.key)).body.updated_at).toBe(record.updated_at)
          expect((await list(own.key, `updated_since=${record.updated_at + 1}`))[kind.listKey]).toEqual([])
        })

        it('tags GET and PATCH answers with a strong ETag that changes with the record', async () => {
          const [record] = await create(own.key, 1)
          const got = await api('GET', one(record), own.key)
          expect(got.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{10,}"$/)
          const patched = await api('PATCH', one(record), own.key, kind.rename)
          expect(patched.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]{10,}"$/)
          expect(patched.headers.get('etag')).not.toBe(got.headers.get('etag'))
          expect((await api('GET', one(record), own.key)).headers.get('etag')).toBe(patched.headers.get('etag'))
        })

        it('answers 304 with no body to If-None-Match naming the current ETag, 200 to a stale one', async () => {
          const [record] = await create(own.key, 1)
          const tag = (await api('GET', one(record), own.key)).headers.get('etag')!
          for (const header of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
            const res = await api('GET', one(record), own.key, undefined, { 'if-none-match': header })
            expect(res.status, header).toBe(304)
            expect(res.text).toBe('')
            expect(res.headers.get('etag')).toBe(tag)
          }
          const stale = await api('GET', one(record), own.key, undefined, { 'if-none-match': '"stale"' })
          expect([stale.status, stale.body]).toEqual([200, record])
          // HEAD as GET (RFC 9110): 304 for the current tag, 200 for a stale one.
          const head = await api('HEAD', one(record), own.key, undefined, { 'if-none-match': tag })
          expect([head.status, head.headers.get('etag')]).toEqual([304, tag])
          expect((await api('HEAD', one(record), own.key, undefined, { 'if-none-match': '"stale"' })).status).toBe(200)
        })

        it('refuses a PATCH with a stale If-Match with 412 and changes nothing; the current tag passes', async () => {
          const [record] = await create(own.key, 1)
          const old = (await api('GET', one(record), own.key)).headers.get('etag')!
          const current = (await api('PATCH', one(record), own.key, { name: 'Second' })).headers.get('etag')!
          const refused = await api('PATCH', one(record), own.key, { name: 'Third' }, { 'if-match': old })
          expect(refused.status).toBe(412)
          expect(refused.body).toEqual({ error: expect.stringContaining('If-Match') })
          expect((await api('GET', one(record), own.key)).body.name).toBe('Second')
          const passed = await api('PATCH', one(record), own.key, { name: 'Third' }, { 'if-match': current })
          expect([passed.status, passed.body.name]).toEqual([200, 'Third'])
          expect((await api('PATCH', one(record), own.key, { name: 'Fourth' }, { 'if-match': `W/${passed.headers.get('etag')}` })).status).toBe(412)
        })

        it('refuses a DELETE with a stale If-Match with 412 and keeps the record; the current tag deletes it', async () => {
          const [record] = await create(own.key, 1)
          const old = (await api('GET', one(record), own.key)).headers.get('etag')!
          const current = (await api('PATCH', one(record), own.key, kind.rename)).headers.get('etag')!
          const refused = await api('DELETE', one(record), own.key, undefined, { 'if-match': old })
          expect([refused.status, refused.body]).toEqual([412, { error: expect.stringContaining('If-Match') }])
          expect((await api('GET', one(record), own.key)).status).toBe(200)
          expect((await api('DELETE', one(record), own.key, undefined, { 'if-match': current })).status).toBe(200)
          expect((await api('GET', one(record), own.key)).status).toBe(404)
        })
      })

      describe(`${kind.name}: cursors`, () => {
        const firstCursor = async (key: string, query = 'limit=1') => (await list(key, query)).next_cursor!

        it('issues cursors that show no store position', async () => {
          const own = fresh()
          await create(own.key, 2)
          const cursor = await firstCursor(own.key)
          expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
          expect(Buffer.from(cursor, 'base64url').toString('latin1')).not.toMatch(/^[0-9a-f]+$/)
        })

        it('answers 400 JSON to a forged, altered, foreign or other-query cursor, and still pages with its own', async () => {
          const [own, other] = [fresh(), fresh()]
          await create(own.key, 3)
          await create(other.key, 3)
          const cursor = await firstCursor(own.key)
          const altered = `${cursor.slice(0, -2)}${cursor.at(-2) === 'A' ? 'B' : 'A'}${cursor.at(-1)}`
          const otherKind = KINDS.find((k) => k !== kind)!
          await api('POST', otherKind.path, own.key, otherKind.item('x'))
          const otherKindCursor = (await call(stack(), 'GET', `${otherKind.path}?limit=1`, { key: own.key })).body.next_cursor
          const foreign = await firstCursor(other.key)
          const otherQuery = await firstCursor(own.key, 'limit=1&updated_since=0')
          const otherOrder = await firstCursor(own.key, 'limit=1&sort=-created_at')
          const cases: [string, string, string][] = [
            ['forged', own.key, `limit=1&cursor=${Buffer.from('1').toString('base64url')}`],
            ['altered', own.key, `limit=1&cursor=${altered}`],
            ['another library', own.key, `limit=1&cursor=${foreign}`],
            ['another collection', own.key, `limit=1&cursor=${otherKindCursor}`],
            ['another query', own.key, `limit=1&cursor=${otherQuery}`],
            ['another order', own.key, `limit=1&cursor=${otherOrder}`],
            ['another order, sorted', own.key, `limit=1&sort=created_at&cursor=${otherOrder}`],
            ['mine, by another library', other.key, `limit=1&cursor=${cursor}`],
          ]
          for (const [what, key, query] of cases) {
            const res = await api('GET', `${kind.path}?${query}`, key)
            // Says what a cursor continues: the client did get most of these from us.
            expect({ what, status: res.status, type: res.headers.get('content-type'), body: res.body }).toEqual({ what, status: 400, type: 'application/json; charset=utf-8', body: { error: LIST_CURSOR_REFUSED } })
          }
          expect((await list(own.key, `limit=5&cursor=${cursor}`))[kind.listKey]).toHaveLength(2)
        })
      })
    }
  })
}
