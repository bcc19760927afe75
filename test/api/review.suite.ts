import { beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember, type Libraries, type Member, seedLibraries } from '../harness/fixtures'
import type { Stack } from '../harness/stack'
import { BROWSER, pathOf } from './short-links.suite'

const OLD = 'https://example.com/approved'
const NEW = 'https://example.com/proposed'
const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36'
const WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36'
const RULES = [{ os: 'ios', destination_url: 'https://apps.example/ios' }, { os: 'android', destination_url: 'https://apps.example/android' }]

/** Reviewed edits of team codes and device redirect rules (docs/decisions.md, "Reviewed edits and device rules"). */
export function reviewSuite(stack: () => Stack) {
  describe('reviewed edits and device rules', () => {
    let lib: Libraries
    let own: Member
    const api = (method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>) => call(stack(), method, path, { key, body, headers })
    const scan = (record: { short_url: string }, agent = BROWSER) => stack().short(pathOf(record), { headers: { 'user-agent': agent } })
    const locationOf = async (record: { short_url: string }, agent = BROWSER) => (await scan(record, agent)).headers.get('location')
    const review = (code: string, key: string, body: unknown, headers?: Record<string, string>) => api('POST', `/v1/dynqrcodes/${code}/review`, key, body, headers)

    /** A code of the team library a writer made and the admin approved, already scanned once (so the resolver holds it). */
    async function activeTeamCode(extra: object = {}) {
      const [draft] = (await api('POST', '/v1/dynqrcodes', lib.teamWriter.key, { destination_url: OLD, name: 'Printed poster', ...extra })).body.created
      const active = await api('PATCH', `/v1/dynqrcodes/${draft.code}`, lib.teamAdmin.key, { status: 'active' })
      expect(active.status).toBe(200)
      expect(await locationOf(active.body)).toBe(OLD)
      return active.body
    }

    beforeAll(async () => {
      lib = await seedLibraries(stack())
      own = await freshMember(stack())
    })

    it('keeps a writer\'s new destination of an active team code pending: 200, record unchanged with pending_change, resolver on the approved URL', async () => {
      const record = await activeTeamCode()
      const res = await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key, { destination_url: NEW, name: 'Renamed' })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({
        ...record, name: 'Renamed', updated_at: expect.any(Number),
        pending_change: { destination_url: NEW, redirect_rules: [], fallback_url: null, requested_by: lib.teamWriter.account_id, requested_at: expect.any(Number) },
      })
      expect((await api('GET', `/v1/dynqrcodes/${record.code}`, lib.teamAdmin.key)).body).toEqual(res.body)
      if (stack().mode === 'nats') await Bun.sleep(300)
      expect(await locationOf(record)).toBe(OLD)
    })

    it('lists codes awaiting review with pending=true, the others with pending=false, and refuses another value with 400', async () => {
      const waiting = await activeTeamCode()
      const settledOne = await activeTeamCode()
      await api('PATCH', `/v1/dynqrcodes/${waiting.code}`, lib.teamWriter.key, { destination_url: NEW })
      const codes = async (query: string) => (await api('GET', `/v1/dynqrcodes?limit=1000&${query}`, lib.teamAdmin.key)).body.dynqrcodes.map((r: any) => r.code)
      const pending = await codes('pending=true')
      const other = await codes('pending=false')
      expect([pending.includes(waiting.code), pending.includes(settledOne.code), other.includes(waiting.code), other.includes(settledOne.code)]).toEqual([true, false, false, true])
      const bad = await api('GET', '/v1/dynqrcodes?pending=yes', lib.teamAdmin.key)
      expect([bad.status, bad.body]).toEqual([400, { error: 'pending must be "true" or "false"' }])
    })

    it('lets a team admin approve: the new URL applies, pending_change goes, the ETag changes and the resolver follows on the next scan', async () => {
      const record = await activeTeamCode()
      const pending = await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key, { destination_url: NEW })
      const res = await review(record.code, lib.teamAdmin.key, { decision: 'approve' })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ ...record, destination_url: NEW, updated_at: expect.any(Number) })
      expect(res.headers.get('etag')).toEqual(expect.any(String))
      expect(res.headers.get('etag')).not.toBe(pending.headers.get('etag'))
      expect(await locationOf(record)).toBe(NEW)
      const again = await review(record.code, lib.teamAdmin.key, { decision: 'approve' })
      expect([again.status, again.body]).toEqual([409, { error: 'this code has no pending change to review' }])
    })

    it('lets a team admin reject: the approved URL stays and the pending change is gone', async () => {
      const record = await activeTeamCode()
      await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key, { destination_url: NEW })
      const res = await review(record.code, lib.teamAdmin.key, { decision: 'reject' })
      expect([res.status, res.body]).toEqual([200, { ...record, updated_at: expect.any(Number) }])
      expect(await locationOf(record)).toBe(OLD)
    })

    it('refuses a writer\'s review with 403, a personal key\'s with 409, a bad body with 400, and a stale If-Match with 412', async () => {
      const record = await activeTeamCode()
      const pending = await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key, { destination_url: NEW })
      const writer = await review(record.code, lib.teamWriter.key, { decision: 'approve' })
      expect([writer.status, writer.body]).toEqual([403, { error: 'only a team admin can review a pending change; this key belongs to a writer' }])
      const [own] = (await api('POST', '/v1/dynqrcodes', lib.alice.key, { destination_url: OLD, name: 'Mine' })).body.created
      const personal = await review(own.code, lib.alice.key, { decision: 'approve' })
      expect([personal.status, personal.body]).toEqual([409, { error: 'a personal library has no reviews: its edits apply at once' }])
      for (const body of [{}, { decision: 'yes' }, { decision: 'approve', note: 'x' }]) {
        const bad = await review(record.code, lib.teamAdmin.key, body)
        expect([bad.status, bad.body], JSON.stringify(body)).toEqual([400, { error: expect.any(String) }])
      }
      await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key, { destination_url: 'https://example.com/other' })
      const stale = await review(record.code, lib.teamAdmin.key, { decision: 'approve' }, { 'if-match': pending.headers.get('etag')! })
      expect(stale.status).toBe(412)
      // A code the key cannot reach is 404 for every key (the specification: "otherwise 404"),
      // before a personal key's 409 or a writer's 403.
      for (const [code, key] of [['Nope1234', lib.teamAdmin.key], ['Nope1234', lib.teamWriter.key], ['Nope1234', lib.alice.key], [record.code, lib.alice.key]]) {
        const unknown = await review(code!, key!, { decision: 'approve' })
        expect([unknown.status, unknown.body.error]).toEqual([404, expect.stringContaining(code!)])
      }
      expect((await api('GET', `/v1/dynqrcodes/${record.code}`, lib.teamAdmin.key)).body).toMatchObject({ destination_url: OLD, pending_change: { destination_url: 'https://example.com/other' } })
    })

    it('honours Idempotency-Key: a retried review answers the first decision (not a 409), the key with another decision or on a create is 422', async () => {
      const record = await activeTeamCode()
      await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key, { destination_url: NEW })
      const idem = { 'idempotency-key': `review-${record.code}` }
      const first = await review(record.code, lib.teamAdmin.key, { decision: 'approve' }, idem)
      expect([first.status, first.body.destination_url]).toEqual([200, NEW])
      const again = await review(record.code, lib.teamAdmin.key, { decision: 'approve' }, idem)
      expect([again.status, again.body, again.headers.get('etag')]).toEqual([200, first.body, first.headers.get('etag')])
      const conflict = { error: 'this Idempotency-Key was already used with a different request' }
      const other = await review(record.code, lib.teamAdmin.key, { decision: 'reject' }, idem)
      expect([other.status, other.body]).toEqual([422, conflict])
      const create = await api('POST', '/v1/dynqrcodes', lib.teamAdmin.key, { destination_url: OLD, name: 'Same key' }, idem)
      expect([create.status, create.body]).toEqual([422, conflict])
      // A create's key is not a review's either.
      const second = await activeTeamCode()
      await api('PATCH', `/v1/dynqrcodes/${second.code}`, lib.teamWriter.key, { destination_url: NEW })
      const made = { 'idempotency-key': `made-${second.code}` }
      expect((await api('POST', '/v1/qrcodes', lib.teamAdmin.key, { url: OLD, name: 'Static' }, made)).status).toBe(201)
      const reused = await review(second.code, lib.teamAdmin.key, { decision: 'approve' }, made)
      expect([reused.status, reused.body]).toEqual([422, conflict])
      expect((await api('GET', `/v1/dynqrcodes/${second.code}`, lib.teamAdmin.key)).body.pending_change?.destination_url).toBe(NEW)
      const malformed = await review(second.code, lib.teamAdmin.key, { decision: 'approve' }, { 'idempotency-key': 'with space' })
      expect([malformed.status, malformed.body]).toEqual([400, { error: 'Idempotency-Key must be 1 to 255 visible ASCII characters' }])
    })

    it('applies an admin\'s own PATCH of the destination at once, dropping a pending change', async () => {
      const record = await activeTeamCode()
      await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key, { destination_url: NEW })
      const res = await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamAdmin.key, { destination_url: 'https://example.com/admin' })
      expect([res.status, res.body]).toEqual([200, { ...record, destination_url: 'https://example.com/admin', updated_at: expect.any(Number) }])
      expect(await locationOf(record)).toBe('https://example.com/admin')
    })

    it('leaves personal libraries unchanged: the owner\'s PATCH applies at once', async () => {
      const [record] = (await api('POST', '/v1/dynqrcodes', own.key, { destination_url: OLD, name: 'Mine' })).body.created
      expect(await locationOf(record)).toBe(OLD)
      const res = await api('PATCH', `/v1/dynqrcodes/${record.code}`, own.key, { destination_url: NEW })
      expect([res.status, res.body]).toEqual([200, { ...record, destination_url: NEW, updated_at: expect.any(Number) }])
      expect(await locationOf(record)).toBe(NEW)
    })

    it('redirects by device rules through the resolver: the first rule of the scan\'s OS, else destination_url', async () => {
      const res = await api('POST', '/v1/dynqrcodes', own.key, { destination_url: OLD, name: 'App', redirect_rules: RULES })
      expect(res.status).toBe(201)
      const [record] = res.body.created
      expect(record.redirect_rules).toEqual(RULES)
      expect(await locationOf(record, BROWSER)).toBe('https://apps.example/ios')
      expect(await locationOf(record, ANDROID)).toBe('https://apps.example/android')
      expect(await locationOf(record, WINDOWS)).toBe(OLD)
      const bad = await api('POST', '/v1/dynqrcodes', own.key, { destination_url: OLD, name: 'App', redirect_rules: [{ os: 'ios', destination_url: 'ftp://x.example' }] })
      expect([bad.status, bad.body]).toEqual([400, { error: expect.stringContaining('redirect_rules[0].destination_url') }])
    })

    it('keeps a writer\'s edit of the rules of an active team code pending until an admin approves it', async () => {
      const record = await activeTeamCode()
      const res = await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key, { redirect_rules: RULES })
      expect(res.status).toBe(200)
      expect(res.body.redirect_rules).toBeUndefined()
      expect(res.body.pending_change).toEqual({ destination_url: OLD, redirect_rules: RULES, fallback_url: null, requested_by: lib.teamWriter.account_id, requested_at: expect.any(Number) })
      if (stack().mode === 'nats') await Bun.sleep(300)
      expect(await locationOf(record, ANDROID)).toBe(OLD)
      expect((await review(record.code, lib.teamAdmin.key, { decision: 'approve' })).body.redirect_rules).toEqual(RULES)
      expect(await locationOf(record, ANDROID)).toBe('https://apps.example/android')
    })

    it('keeps a writer\'s fallback_url of an active team code pending too: an expiry in the past cannot send its scans to an unapproved URL', async () => {
      const record = await activeTeamCode()
      const evil = 'https://evil.example/'
      const res = await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key, { fallback_url: evil, expires_at: 1 })
      expect(res.status).toBe(200)
      expect(res.body.fallback_url).toBeUndefined()
      expect(res.body.expires_at).toBe(1) // not a destination: applies at once, as a move to draft would
      expect(res.body.pending_change).toEqual({ destination_url: OLD, redirect_rules: [], fallback_url: evil, requested_by: lib.teamWriter.account_id, requested_at: expect.any(Number) })
      if (stack().mode === 'nats') await Bun.sleep(300)
      const scanned = await scan(record)
      expect([scanned.status, scanned.headers.get('location')]).toEqual([410, null])
      const approved = await review(record.code, lib.teamAdmin.key, { decision: 'approve' })
      expect([approved.status, approved.body.fallback_url]).toEqual([200, evil])
      expect(await locationOf(record)).toBe(evil)
    })

    it('lets a writer delete an active team code at once, with its pending change: no review, and the short link is gone for good (docs/decisions.md §3)', async () => {
      const record = await activeTeamCode()
      await api('PATCH', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key, { destination_url: NEW })
      const deleted = await api('DELETE', `/v1/dynqrcodes/${record.code}`, lib.teamWriter.key)
      expect([deleted.status, deleted.body]).toEqual([200, { deleted: record.code }])
      expect((await api('GET', `/v1/dynqrcodes/${record.code}`, lib.teamAdmin.key)).status).toBe(404)
      expect((await review(record.code, lib.teamAdmin.key, { decision: 'approve' })).status).toBe(404)
      if (stack().mode === 'nats') await Bun.sleep(300)
      expect((await scan(record)).status).toBe(410)
    })
  })
}
