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
  urlField: string
  batch(items: Record<string, unknown>[]): unknown
}

const KINDS: Kind[] = [
  { name: 'static', path: '/v1/qrcodes', listKey: 'qrcodes', idField: 'qr_id', urlField: 'url', batch: (items) => ({ qrcodes: items }) },
  { name: 'dynamic', path: '/v1/dynqrcodes', listKey: 'dynqrcodes', idField: 'code', urlField: 'destination_url', batch: (items) => items },
]

const TAG_RULE = 'each tag must be 1 to 32 characters of ASCII letters, digits, - or _'
/** The 400 of a list filter with the list of changes: the dynamic list's status and pending are filters too. */
const onlyList = (kind: Kind) =>
  `${kind.name === 'dynamic' ? 'sort, tag, q, status and pending apply' : 'sort, tag and q apply'} to the list, not to the list of changes (updated_since, include_deleted): leave them out or drop updated_since and include_deleted`

/**
 * Tags, search and sort on both kinds (README "Tags, search and sort", docs/decisions.md):
 * tags on create, batch and PATCH; the list's tag, q and sort with their cursors; the CSV column.
 */
export function tagsSuite(stack: () => Stack) {
  describe('tags, search and sort', () => {
    const members: Member[] = []
    let next = 0
    /** A library of its own for each test. */
    const fresh = () => members[next++]!
    const api = (method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>) => call(stack(), method, path, { key, body, headers })

    beforeAll(async () => {
      // 24 libraries (12 tests of each kind), a few at a time: each is two runs of the admin command line.
      for (let i = 0; i < 6; i++) members.push(...(await Promise.all(Array.from({ length: 4 }, () => freshMember(stack())))))
    }, 120_000)

    for (const kind of KINDS) {
      // The URL holds the name's ASCII letters and digits only, so a search of other characters meets the name alone.
      const item = (name: string, extra: Record<string, unknown> = {}) => ({ [kind.urlField]: `https://example.com/${name.replace(/[^A-Za-z0-9]/g, '')}`, name, ...extra })
      const create = async (key: string, items: Record<string, unknown>[]) => {
        const res = await api('POST', `${kind.path}/batch`, key, kind.batch(items))
        expect(res.status).toBe(201)
        return res.body.created as any[]
      }
      const idOf = (record: any) => record[kind.idField] as string
      const list = async (key: string, query: string) => {
        const res = await api('GET', `${kind.path}?${query}`, key)
        expect(res.status, `${query}: ${res.text}`).toBe(200)
        return res.body as { next_cursor: string | null } & Record<string, any[]>
      }
      /** Every page of a query; `between` runs after each page. */
      async function walk(key: string, query: string, between?: (page: number) => Promise<void>) {
        const seen: any[] = []
        let cursor: string | null = null
        for (let page = 0; page < 50; page++) {
          const body = await list(key, `${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
          seen.push(...body[kind.listKey]!)
          cursor = body.next_cursor
          if (!cursor) return seen
          await between?.(page)
        }
        throw new Error('paging did not end')
      }
      const names = (records: any[]) => records.map((r) => r.name)

      describe(`${kind.name}: tags on the record`, () => {
        it('stores tags lowercased, without duplicates, in order; [] when none; on create, batch and GET', async () => {
          const own = fresh()
          const single = await api('POST', kind.path, own.key, item('one', { tags: ['Print', 'menu', 'PRINT', 'a_b-1'] }))
          expect(single.status).toBe(201)
          expect(single.body.created[0].tags).toEqual(['a_b-1', 'menu', 'print'])
          const [tagged, plain] = await create(own.key, [item('two', { tags: ['Z'] }), item('three')])
          expect([tagged.tags, plain.tags]).toEqual([['z'], []])
          expect((await api('GET', `${kind.path}/${idOf(single.body.created[0])}`, own.key)).body.tags).toEqual(['a_b-1', 'menu', 'print'])
          expect((await api('GET', `${kind.path}/${idOf(plain)}`, own.key)).body.tags).toEqual([])
        })

        it('refuses bad tags with a 400 naming the rule, on create, batch and PATCH, and stores nothing', async () => {
          const own = fresh()
          const cases: [unknown, string][] = [
            ['print', 'tags must be an array of at most 10 tags'],
            [null, 'tags must be an array of at most 10 tags'],
            [Array.from({ length: 11 }, (_, i) => `t${i}`), 'tags must be an array of at most 10 tags'],
            [['ok', 'two words'], TAG_RULE],
            [[''], TAG_RULE],
            [['x'.repeat(33)], TAG_RULE],
            [['été'], TAG_RULE],
            [[7], TAG_RULE],
          ]
          for (const [tags, error] of cases) {
            const res = await api('POST', kind.path, own.key, item('bad', { tags }))
            expect({ tags, status: res.status, body: res.body }).toEqual({ tags, status: 400, body: { error } })
          }
          const batch = await api('POST', `${kind.path}/batch`, own.key, kind.batch([item('fine'), item('bad', { tags: ['no way'] })]))
          expect(batch.status).toBe(400)
          expect(JSON.stringify(batch.body)).toContain(TAG_RULE)
          expect((await list(own.key, ''))[kind.listKey]).toEqual([])
          const [record] = await create(own.key, [item('kept', { tags: ['a'] })])
          const patch = await api('PATCH', `${kind.path}/${idOf(record)}`, own.key, { tags: ['ok', 'not ok'] })
          expect(patch.status).toBe(400)
          expect(patch.body).toEqual({ error: TAG_RULE })
          expect((await api('GET', `${kind.path}/${idOf(record)}`, own.key)).body.tags).toEqual(['a'])
          expect((await api('POST', kind.path, own.key, item('long', { tags: ['x'.repeat(32)] }))).status).toBe(201)
        })

        it('replaces the set on PATCH; the same set in another order or case is a no-op (updated_at and ETag kept)', async () => {
          const own = fresh()
          const [record] = await create(own.key, [item('patched', { tags: ['a', 'b'] })])
          const one = `${kind.path}/${idOf(record)}`
          const etag = (await api('GET', one, own.key)).headers.get('etag')
          const same = await api('PATCH', one, own.key, { tags: ['B', 'a', 'a'] })
          expect(same.status).toBe(200)
          expect(same.body).toEqual(record)
          expect(same.headers.get('etag')).toBe(etag)
          const replaced = await api('PATCH', one, own.key, { tags: ['c'] })
          expect(replaced.body.tags).toEqual(['c'])
          expect(replaced.headers.get('etag')).not.toBe(etag)
          expect((await api('PATCH', one, own.key, { tags: [] })).body.tags).toEqual([])
          expect((await api('PATCH', one, own.key, { name: 'renamed' })).body.tags).toEqual([])
        })
      })

      describe(`${kind.name}: list filters`, () => {
        it('tag= keeps records carrying every tag given (repeatable, any case)', async () => {
          const own = fresh()
          await create(own.key, [item('a', { tags: ['print', 'menu'] }), item('b', { tags: ['print'] }), item('c', { tags: ['menu'] }), item('d')])
          expect(names((await list(own.key, 'tag=print'))[kind.listKey]!)).toEqual(['a', 'b'])
          expect(names((await list(own.key, 'tag=MENU&tag=print'))[kind.listKey]!)).toEqual(['a'])
          expect(names((await list(own.key, 'tag=menu&tag=nowhere'))[kind.listKey]!)).toEqual([])
          expect(names(await walk(own.key, 'tag=menu&limit=1'))).toEqual(['a', 'c'])
        })

        it('q= keeps records whose name or URL contains the text, ASCII letters in either case', async () => {
          const own = fresh()
          await create(own.key, [item('Summer Menu'), { [kind.urlField]: 'https://shop.example/SUMMER', name: 'Flyer' }, item('100% off'), item('Crème')])
          expect(names((await list(own.key, 'q=summer'))[kind.listKey]!)).toEqual(['Summer Menu', 'Flyer'])
          expect(names((await list(own.key, `q=${encodeURIComponent('shop.example/')}`))[kind.listKey]!)).toEqual(['Flyer'])
          expect(names((await list(own.key, `q=${encodeURIComponent('%')}`))[kind.listKey]!)).toEqual(['100% off'])
          expect(names((await list(own.key, `q=${encodeURIComponent('crème')}`))[kind.listKey]!)).toEqual(['Crème'])
          expect(names((await list(own.key, `q=MENU&tag=none`))[kind.listKey]!)).toEqual([])
        })

        it('counts q in characters (code points), as the maxLength of the document does: 100 emoji are 100', async () => {
          const own = fresh()
          const emoji = '\u{1F600}'
          await create(own.key, [item(`${emoji.repeat(100)} menu`), item('plain')])
          expect(names((await list(own.key, `q=${encodeURIComponent(emoji.repeat(100))}`))[kind.listKey]!)).toEqual([`${emoji.repeat(100)} menu`])
          const over = await api('GET', `${kind.path}?q=${encodeURIComponent(emoji.repeat(101))}`, own.key)
          expect({ status: over.status, body: over.body }).toEqual({ status: 400, body: { error: 'q must be 1 to 100 characters' } })
        })

        it('refuses bad filter values, and sort/tag/q with the list of changes, with a clear 400', async () => {
          const own = fresh()
          const cases: [string, string][] = [
            ['tag=two%20words', `tag: ${TAG_RULE}; at most 10 tag parameters`],
            ['tag=', `tag: ${TAG_RULE}; at most 10 tag parameters`],
            [Array.from({ length: 11 }, (_, i) => `tag=t${i}`).join('&'), `tag: ${TAG_RULE}; at most 10 tag parameters`],
            ['q=', 'q must be 1 to 100 characters'],
            [`q=${'x'.repeat(101)}`, 'q must be 1 to 100 characters'],
            ['sort=size', 'sort must be one of created_at, -created_at, updated_at, -updated_at, name'],
            ['sort=name&sort=name', 'query parameter "sort" may be given only once'],
            ['limit=1&limit=2', 'query parameter "limit" may be given only once'],
            ['sort=name&updated_since=0', onlyList(kind)],
            ['tag=a&include_deleted=true', onlyList(kind)],
            ['q=a&updated_since=0', onlyList(kind)],
            // A change feed filtered by status would never report a code that went to draft (a probe's mirror kept it).
            ...(kind.name === 'dynamic' ? [['status=active&updated_since=0', onlyList(kind)], ['pending=false&include_deleted=true', onlyList(kind)]] as [string, string][] : []),
          ]
          for (const [query, error] of cases) {
            const res = await api('GET', `${kind.path}?${query}`, own.key)
            expect({ query, status: res.status, body: res.body }).toEqual({ query, status: 400, body: { error } })
          }
        })
      })

      describe(`${kind.name}: sort and cursors`, () => {
        it('sorts by name, created_at and updated_at either way; walking the pages returns each record once', async () => {
          const own = fresh()
          const made = await create(own.key, ['delta', 'Bravo', 'alpha', 'charlie', 'alpha'].map((name) => item(name)))
          const ids = (records: any[]) => records.map(idOf)
          for (const limit of [1, 2, 10]) {
            // Code points: upper case first; the two alphas in insertion order.
            expect(ids(await walk(own.key, `sort=name&limit=${limit}`))).toEqual([1, 2, 4, 3, 0].map((i) => idOf(made[i])))
            // One batch: one created_at, so insertion order breaks the tie, in the sort's direction.
            expect(ids(await walk(own.key, `sort=created_at&limit=${limit}`))).toEqual(ids(made))
            expect(ids(await walk(own.key, `sort=-created_at&limit=${limit}`))).toEqual(ids(made).reverse())
          }
          await Bun.sleep(1100)
          expect((await api('PATCH', `${kind.path}/${idOf(made[1])}`, own.key, { tags: ['newest'] })).status).toBe(200)
          expect(ids(await walk(own.key, 'sort=-updated_at&limit=2'))).toEqual([1, 4, 3, 2, 0].map((i) => idOf(made[i])))
          expect(ids(await walk(own.key, 'sort=updated_at&limit=2'))).toEqual([0, 2, 3, 4, 1].map((i) => idOf(made[i])))
          expect(ids(await walk(own.key, 'sort=-created_at&tag=newest&limit=1'))).toEqual([idOf(made[1])])
        })

        it('keeps a sorted walk exact while records are created between pages; a cursor continues only its own query', async () => {
          const own = fresh()
          await create(own.key, ['m1', 'm2', 'm3', 'm4'].map((name) => item(name)))
          let n = 0
          const seen = await walk(own.key, 'sort=name&limit=2', async () => {
            n++
            await create(own.key, [item(`a${n}`), item(`z${n}`)])
          })
          // Names sorting before the cursor are not met again; those after it are met once.
          expect(names(seen)).toEqual(['m1', 'm2', 'm3', 'm4', 'z1', 'z2'])
          const first = await list(own.key, 'sort=name&limit=1')
          for (const other of ['sort=-created_at', 'sort=name&tag=x', 'sort=name&q=m', '']) {
            const res = await api('GET', `${kind.path}?${other}${other ? '&' : ''}cursor=${encodeURIComponent(first.next_cursor!)}`, own.key)
            expect({ other, status: res.status, body: res.body }).toEqual({ other, status: 400, body: { error: LIST_CURSOR_REFUSED } })
          }
          // Another limit continues the same query (a1 was the first page).
          expect(names((await list(own.key, `sort=name&limit=3&cursor=${encodeURIComponent(first.next_cursor!)}`))[kind.listKey]!)).toEqual(['a2', 'm1', 'm2'])
        })

        it('carries a long name in a name-sorted cursor', async () => {
          const own = fresh()
          const long = '😀'.repeat(200)
          await create(own.key, [item('a'), item(long), item(`${long.slice(0, 398)}z`)])
          // 199 emoji then z sorts before 200 emoji: z (U+007A) < 😀 (U+1F600).
          expect(names(await walk(own.key, 'sort=name&limit=1'))).toEqual(['a', `${long.slice(0, 398)}z`, long])
        })
      })

      describe(`${kind.name}: CSV export`, () => {
        it('has a tags column, the tags separated by spaces', async () => {
          const own = fresh()
          const [tagged, plain] = await create(own.key, [item('tagged', { tags: ['print', 'menu'] }), item('plain')])
          const res = await api('GET', `${kind.path}/export`, own.key)
          expect(res.status).toBe(200)
          const [header, first, second] = res.text.split('\r\n')
          expect(header!.split(',').at(-1)).toBe('tags')
          expect(first!.startsWith(idOf(tagged))).toBe(true)
          expect(first!.endsWith(',menu print')).toBe(true)
          expect(second!.startsWith(idOf(plain))).toBe(true)
          expect(second!.endsWith(`,${plain.updated_at},`)).toBe(true)
        })
      })
    }
  })
}
