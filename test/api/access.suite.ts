import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { account, businessKey, freshMember, personalKey } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

const valid = { url: 'https://example.com/a', name: 'A' }

/** Keys and the account behind them (docs/decisions.md §2, §8). */
export function accessSuite(stack: () => Stack, startDelayed: () => Promise<Stack>) {
  describe('API keys', () => {
    const list = (key: string) => call(stack(), 'GET', '/v1/qrcodes', { key })

    it('refuses a request without a key with 403 and says the key is missing', async () => {
      const res = await call(stack(), 'GET', '/v1/qrcodes')
      expect(res.status).toBe(403)
      expect(res.body).toEqual({ error: expect.stringContaining('missing') })
    })

    it('refuses an unknown key with 403', async () => {
      const res = await list('lrp_0000000000000000000000000000000000')
      expect(res.status).toBe(403)
      expect(res.body).toEqual({ error: expect.any(String) })
    })

    it('checks the key before the route: an unknown route without a key is 403, with one 404', async () => {
      const member = await freshMember(stack())
      expect((await call(stack(), 'GET', '/v1/nothing')).status).toBe(403)
      const res = await call(stack(), 'GET', '/v1/nothing', { key: member.key })
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ error: expect.any(String) })
    })

    // By its id, or by its secret, as a leaked key is found (a secret scanner's report): either way
    // the answer names the key and its owner, and the very next request with it is refused.
    for (const [flag, field] of [['--key-id', 'key_id'], ['--key', 'key']] as const) {
      it(`refuses a key revoked by ${flag} on the very next request`, async () => {
        const member = await freshMember(stack())
        expect((await list(member.key)).status).toBe(200)
        const revoked = await stack().admin('key', 'revoke', flag, member[field])
        expect(revoked).toEqual({ key_id: member.key_id, account_id: member.account_id, revoked_at: expect.any(Number) })
        const res = await list(member.key)
        expect(res.status).toBe(403)
        expect(res.body.error).toContain('revoked')
      })
    }

    it('allows one live key per scope and a new one after revocation', async () => {
      const member = await freshMember(stack())
      expect(await stack().adminFails('key', 'create', '--account', member.account_id, '--scope', 'personal')).toBeString()
      await stack().admin('key', 'revoke', '--key-id', member.key_id)
      const next = await personalKey(stack(), member.account_id)
      expect(next.key).not.toBe(member.key)
      expect((await list(next.key)).status).toBe(200)
    })

    it('gives personal and business keys recognisable prefixes and lists them without the secret', async () => {
      const { account_id } = await account(stack(), 'lister', 'business')
      const team = await stack().admin('team', 'create', '--name', 'T', '--admin', account_id)
      const personal = await personalKey(stack(), account_id)
      const business = await businessKey(stack(), account_id, team.team_id)
      expect(personal.key).toMatch(/^lrp_[0-9A-Za-z]{32,}$/)
      expect(business.key).toMatch(/^lrb_[0-9A-Za-z]{32,}$/)
      const listed = await stack().admin('key', 'list', '--account', account_id)
      expect(JSON.stringify(listed)).not.toContain(personal.key)
      expect(listed.keys.map((k: any) => k.scope).sort()).toEqual(['business', 'personal'])
    })

    it('refuses a basic account a key', async () => {
      const { account_id } = await account(stack(), 'basic', 'basic')
      expect(await stack().adminFails('key', 'create', '--account', account_id, '--scope', 'personal')).toBeString()
    })

    it('refuses a downgraded account with a message about API access, and a temporary grant restores it', async () => {
      const member = await freshMember(stack())
      await stack().admin('account', 'update', '--account', member.account_id, '--tier', 'basic')
      const res = await list(member.key)
      expect(res.status).toBe(403)
      expect(res.body.error).toContain('API access')
      const until = Math.floor(Date.now() / 1000) + 3600
      await stack().admin('account', 'update', '--account', member.account_id, '--api-grant-until', String(until))
      expect((await list(member.key)).status).toBe(200)
      await stack().admin('account', 'update', '--account', member.account_id, '--api-grant-until', String(until - 7200))
      expect((await list(member.key)).body.error).toContain('API access')
    })

    it('refuses a business key once its owner leaves the team', async () => {
      const [{ account_id: boss }, { account_id: writer }] = await Promise.all([account(stack(), 'boss', 'business'), account(stack(), 'w', 'pro')])
      const team = await stack().admin('team', 'create', '--name', 'Leavers', '--admin', boss)
      await stack().admin('team', 'add-member', '--team', team.team_id, '--account', writer, '--role', 'writer')
      const key = await businessKey(stack(), writer, team.team_id)
      expect((await list(key.key)).status).toBe(200)
      const removed = await stack().admin('team', 'remove-member', '--team', team.team_id, '--account', writer)
      expect(removed.revoked_key_id).toBe(key.key_id)
      const res = await list(key.key)
      expect(res.status).toBe(403)
      expect(res.body).toEqual({ error: expect.any(String) })
      // Added back, the account does not get its old key back: it makes a new one.
      await stack().admin('team', 'add-member', '--team', team.team_id, '--account', writer, '--role', 'writer')
      expect((await list(key.key)).body.error).toContain('revoked')
      expect((await list((await businessKey(stack(), writer, team.team_id)).key)).status).toBe(200)
    })

    describe('with an activation delay', () => {
      let delayed: Stack
      beforeAll(async () => {
        delayed = await startDelayed()
      }, 60_000)
      afterAll(() => delayed?.stop())

      it('refuses a new key with 403 and Retry-After until it is active', async () => {
        const { account_id } = await account(delayed, 'new', 'pro')
        const { key } = await personalKey(delayed, account_id)
        const res = await call(delayed, 'GET', '/v1/qrcodes', { key })
        expect(res.status).toBe(403)
        expect(res.body.error).toContain('not active yet')
        const retryAfter = Number(res.headers.get('retry-after'))
        expect(retryAfter).toBeGreaterThan(3500)
        expect(retryAfter).toBeLessThanOrEqual(3600)
      })
    })
  })

  describe('request bodies', () => {
    let key: string
    let qrId: string
    beforeAll(async () => {
      key = (await freshMember(stack())).key
      qrId = (await call(stack(), 'POST', '/v1/qrcodes', { key, body: valid })).body.created[0].qr_id
    }, 60_000)
    const snapshot = async () => (await call(stack(), 'GET', '/v1/qrcodes', { key })).body

    const cases: [string, { raw?: string; body?: unknown; headers?: Record<string, string> }, number][] = [
      ['malformed JSON', { raw: '{"url": ', headers: { 'content-type': 'application/json' } }, 400],
      ['a non-JSON content type', { raw: JSON.stringify(valid), headers: { 'content-type': 'text/plain' } }, 415],
      ['no content type', { raw: JSON.stringify(valid) }, 415],
      ['a body over 1 MiB', { raw: JSON.stringify({ ...valid, name: 'x'.repeat(1024 * 1024) }), headers: { 'content-type': 'application/json' } }, 413],
      ['an empty body', { raw: '', headers: { 'content-type': 'application/json' } }, 400],
      ['an array', { body: [valid] }, 400],
      ['a string', { body: 'hello' }, 400],
      ['null', { body: null }, 400],
      ['wrong types', { body: { url: 5, name: ['a'] } }, 400],
      ['an unknown field', { body: { ...valid, colour: 'red' } }, 400],
    ]

    it('reads a body sent in chunks without a length, and answers 413 once one is over 1 MiB, storing nothing', async () => {
      const chunked = (text: string) => new ReadableStream<Uint8Array>({
        start(controller) {
          const bytes = new TextEncoder().encode(text)
          for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024))
          controller.close()
        },
      })
      const send = (text: string) => stack().request('/v1/qrcodes', {
        method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: chunked(text), duplex: 'half',
      } as RequestInit)
      const created = await send(JSON.stringify({ ...valid, name: 'chunked' }))
      expect([created.status, ((await created.json()) as { created: { name: string }[] }).created[0]!.name]).toEqual([201, 'chunked'])
      const before = await snapshot()
      const large = await send(JSON.stringify({ ...valid, name: 'x'.repeat(1024 * 1024) }))
      expect([large.status, await large.json()]).toEqual([413, { error: 'request body is larger than 1048576 bytes' }])
      expect(await snapshot()).toEqual(before)
    })

    for (const [route, method, path] of [['create', 'POST', '/v1/qrcodes'], ['batch', 'POST', '/v1/qrcodes/batch'], ['patch', 'PATCH', '']] as const) {
      for (const [what, opts, status] of cases) {
        it(`answers ${status} with a JSON error for ${what} on ${route}, leaving the library unchanged`, async () => {
          const before = await snapshot()
          const res = await call(stack(), method, path || `/v1/qrcodes/${qrId}`, { key, ...opts })
          expect(res.status).toBe(status)
          expect(res.headers.get('content-type')).toContain('application/json')
          expect(Object.keys(res.body)).toEqual(['error'])
          expect(await snapshot()).toEqual(before)
        })
      }
    }
  })

  describe('service endpoints', () => {
    it('answers /healthz and /readyz with 200', async () => {
      expect((await call(stack(), 'GET', '/healthz')).status).toBe(200)
      const ready = await call(stack(), 'GET', '/readyz')
      expect(ready.status).toBe(200)
      expect(ready.body.status).toBe('ready')
    })

    it('serves the OpenAPI document of every /v1 route without a key', async () => {
      const res = await call(stack(), 'GET', '/docs/json')
      expect(res.status).toBe(200)
      const paths = res.body.paths
      expect(Object.keys(paths)).toEqual(expect.arrayContaining(['/v1/qrcodes', '/v1/qrcodes/batch', '/v1/qrcodes/export', '/v1/qrcodes/{qr_id}']))
      expect(Object.keys(paths['/v1/qrcodes/{qr_id}']).sort()).toEqual(['delete', 'get', 'patch'])
      expect(res.body.components.securitySchemes.apiKey).toMatchObject({ in: 'header', name: 'x-api-key' })
    })

    it('serves the Swagger UI at /docs', async () => {
      const res = await call(stack(), 'GET', '/docs')
      expect(res.status).toBe(200)
      expect(res.text.toLowerCase()).toContain('swagger')
    })

    it('echoes the client\'s X-Request-Id and makes one up otherwise', async () => {
      const echoed = await call(stack(), 'GET', '/v1/qrcodes', { headers: { 'x-request-id': 'req-123' } })
      expect(echoed.headers.get('x-request-id')).toBe('req-123')
      const made = await call(stack(), 'GET', '/healthz')
      expect(made.headers.get('x-request-id')).toMatch(/^[\w-]{8,}$/)
    })

    it('answers an unknown path outside /v1 with a JSON 404', async () => {
      const res = await call(stack(), 'GET', '/nothing-here')
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ error: expect.any(String) })
    })
  })
}
