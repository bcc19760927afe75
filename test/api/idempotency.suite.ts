import { beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember, type Member } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

/** One create route of the API, for the idempotency checks every create route shares. */
export interface CreateRoute {
  name: string
  path: string
  body: (n: number) => unknown
  /** How many records the library holds now. */
  count: (stack: Stack, key: string) => Promise<number>
}

export const STATIC_CREATES: CreateRoute[] = [
  { name: 'POST /v1/qrcodes', path: '/v1/qrcodes', body: (n) => ({ url: `https://example.com/${n}`, name: `N${n}` }), count: countStatic },
  {
    name: 'POST /v1/qrcodes/batch',
    path: '/v1/qrcodes/batch',
    body: (n) => ({ qrcodes: [{ url: `https://example.com/${n}a`, name: 'A' }, { url: `https://example.com/${n}b`, name: 'B' }] }),
    count: countStatic,
  },
]

async function countStatic(stack: Stack, key: string) {
  return (await call(stack, 'GET', '/v1/qrcodes?limit=1000', { key })).body.qrcodes.length
}

/** Idempotency-Key on every POST (docs/decisions.md §8). */
export function idempotencySuite(stack: () => Stack, routes: CreateRoute[] = STATIC_CREATES) {
  describe('Idempotency-Key', () => {
    let member: Member
    beforeAll(async () => {
      member = await freshMember(stack())
    }, 60_000)
    const post = (route: CreateRoute, body: unknown, idem?: string, key = member.key) =>
      call(stack(), 'POST', route.path, { key, body, headers: idem ? { 'idempotency-key': idem } : {} })

    for (const route of routes) {
      it(`replays the first answer of ${route.name} and creates nothing on a retry`, async () => {
        const idem = `retry-${route.path}-${Date.now()}`
        const first = await post(route, route.body(1), idem)
        expect(first.status).toBe(201)
        const before = await route.count(stack(), member.key)
        const again = await post(route, route.body(1), idem)
        expect(again.status).toBe(201)
        expect(again.body).toEqual(first.body)
        expect(await route.count(stack(), member.key)).toBe(before)
      })

      it(`answers 422 when the key of ${route.name} comes back with another body`, async () => {
        const idem = `clash-${route.path}-${Date.now()}`
        expect((await post(route, route.body(2), idem)).status).toBe(201)
        const before = await route.count(stack(), member.key)
        const res = await post(route, route.body(3), idem)
        expect(res.status).toBe(422)
        expect(res.body).toEqual({ error: expect.stringContaining('Idempotency-Key') })
        expect(await route.count(stack(), member.key)).toBe(before)
      })

      it(`creates once when ${route.name} is sent several times at once with one key`, async () => {
        const idem = `race-${route.path}-${Date.now()}`
        const before = await route.count(stack(), member.key)
        const answers = await Promise.all([1, 2, 3, 4].map(() => post(route, route.body(4), idem)))
        expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201])
        for (const answer of answers) expect(answer.body).toEqual(answers[0]!.body)
        const made = (answers[0]!.body.created as unknown[]).length
        expect(await route.count(stack(), member.key)).toBe(before + made)
      })
    }

    // Every pair of create routes, each way round, the first route owning the key.
    const pairs = routes.flatMap((first) => routes.filter((second) => second !== first).map((second) => [first, second] as const))
    for (const [first, second] of pairs) {
      it(`answers 422 and creates nothing when a key of ${first.name} comes back on ${second.name}`, async () => {
        const idem = `cross-${first.path}-${second.path}-${Date.now()}`
        const made = await post(first, first.body(8), idem)
        expect(made.status).toBe(201)
        const before = await second.count(stack(), member.key)
        const res = await post(second, second.body(8), idem)
        expect([res.status, res.body]).toEqual([422, { error: 'this Idempotency-Key was already used with a different request' }])
        expect(await second.count(stack(), member.key)).toBe(before)
        // The first route still replays its own answer.
        expect((await post(first, first.body(8), idem)).body).toEqual(made.body)
      })
    }

    it('answers 422 to one of two routes racing with one key, and creates on one only', async () => {
      const [first, second] = [routes[0]!, routes.at(-1)!]
      const idem = `cross-race-${Date.now()}`
      const counters = [...new Set([first.count, second.count])]
      const held = () => Promise.all(counters.map((count) => count(stack(), member.key)))
      const before = await held()
      const answers = await Promise.all([post(first, first.body(9), idem), post(second, second.body(9), idem)])
      expect(answers.map((a) => a.status).sort()).toEqual([201, 422])
      const made = (answers.find((a) => a.status === 201)!.body.created as unknown[]).length
      const after = await held()
      expect(after.reduce((sum, n, i) => sum + n - before[i]!, 0)).toBe(made)
    })

    it('keeps keys per API key: another key with the same Idempotency-Key creates its own record', async () => {
      const other = await freshMember(stack())
      const route = routes[0]!
      const idem = `shared-${Date.now()}`
      const mine = await post(route, route.body(5), idem)
      const theirs = await post(route, route.body(5), idem, other.key)
      expect(theirs.status).toBe(201)
      expect(theirs.body).not.toEqual(mine.body)
      expect(await route.count(stack(), other.key)).toBe(1)
    })

    it('runs a failed request again: a 400 is not remembered', async () => {
      const route = routes[0]!
      const idem = `fix-${Date.now()}`
      expect((await post(route, { url: 'nope', name: 'x' }, idem)).status).toBe(400)
      expect((await post(route, route.body(6), idem)).status).toBe(201)
    })

    it('rejects a malformed Idempotency-Key with 400', async () => {
      const res = await post(routes[0]!, routes[0]!.body(7), 'x'.repeat(300))
      expect(res.status).toBe(400)
      expect(res.body.error).toContain('Idempotency-Key')
    })
  })
}
