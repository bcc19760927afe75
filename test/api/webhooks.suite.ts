import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember, type Libraries, type Member, seedLibraries } from '../harness/fixtures'
import { waitUntil } from '../harness/ports'
import { sample } from '../harness/metrics'
import type { Stack } from '../harness/stack'
import { BROWSER } from './short-links.suite'
import { startReceiver, verified, WEBHOOKS_ENV } from './webhooks.receiver'
import { webhookIdempotencySuite } from './webhooks-idempotency.suite'

export { WEBHOOKS_ENV }

/**
 * Signed webhooks per library (docs/decisions.md "Webhooks").
 * `metrics`: the worker runs in the gateway's process (one process), so its series are on the API port's /metrics. */
export function webhooksSuite(stack: () => Stack, opts: { crash?: boolean; metrics?: boolean } = {}) {
  describe('webhooks', () => {
    let libs: Libraries
    let receiver: ReturnType<typeof startReceiver>
    const api = (method: string, path: string, key: string, body?: unknown) => call(stack(), method, path, { key, body })
    const createHook = async (key: string, path: string, events: string[]) => {
      const answer = await api('POST', '/v1/webhooks', key, { url: receiver.url(path), events })
      expect(answer.status).toBe(201)
      return answer.body as { id: string; secret: string; status: string; events: string[]; url: string; created_at: number }
    }
    const arrived = (path: string, n: number, ms = 10_000) => waitUntil(() => receiver.at(path).length >= n, ms, `${n} deliveries at ${path}`)

    beforeAll(async () => {
      receiver = startReceiver()
      libs = await seedLibraries(stack())
    }, 30_000)
    afterAll(() => receiver?.stop())
    webhookIdempotencySuite(stack, (path) => receiver.url(path))

    it('lets only team admins and personal owners manage webhooks: a writer gets 403 on every route', async () => {
      const hook = await createHook(libs.teamAdmin.key, '/ok/team-admin', ['record.created'])
      const writer = libs.teamWriter.key
      const answers = await Promise.all([
        api('POST', '/v1/webhooks', writer, { url: receiver.url('/ok/w'), events: ['scan'] }),
        api('GET', '/v1/webhooks', writer),
        api('DELETE', `/v1/webhooks/${hook.id}`, writer),
        api('GET', `/v1/webhooks/${hook.id}/deliveries`, writer),
      ])
      expect(answers.map((a) => [a.status, typeof a.body.error])).toEqual(Array(4).fill([403, 'string']))
      expect((await api('GET', '/v1/webhooks', libs.teamAdmin.key)).body.webhooks.map((w: { id: string }) => w.id)).toContain(hook.id)
    })

    it('answers the endpoint with its secret once (Standard Webhooks form); the list never shows it', async () => {
      const hook = await createHook(libs.bob.key, '/ok/bob', ['record.created', 'scan'])
      expect(hook).toMatchObject({ url: receiver.url('/ok/bob'), events: ['record.created', 'scan'], status: 'enabled', disabled_at: null })
      expect(hook.id).toMatch(/^wh_/)
      expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/)
      const list = await api('GET', '/v1/webhooks', libs.bob.key)
      expect(list.status).toBe(200)
      const { secret: _secret, ...shown } = hook
      expect(list.body).toEqual({ webhooks: [shown] })
      expect(list.text).not.toContain(hook.secret)
    })

    it('refuses bad bodies with 400 and a clear message', async () => {
      const bad = [
        { url: receiver.url('/ok/x'), events: [] },
        { url: receiver.url('/ok/x'), events: ['record.moved'] },
        { url: receiver.url('/ok/x'), events: ['scan', 'scan'] },
        { url: 'ftp://example.com/x', events: ['scan'] },
        { url: receiver.url('/ok/x') },
        { url: receiver.url('/ok/x'), events: ['scan'], secret: 'mine' },
      ]
      const answers = await Promise.all(bad.map((body) => api('POST', '/v1/webhooks', libs.bob.key, body)))
      expect(answers.map((a) => a.status)).toEqual(Array(bad.length).fill(400))
      expect(answers.every((a) => typeof a.body.error === 'string' && a.body.error.length > 0)).toBe(true)
    })

    it('sends signed record.created, record.updated and record.deleted events of both kinds', async () => {
      const alice = libs.alice.key
      const hook = await createHook(alice, '/ok/alice', ['record.created', 'record.updated', 'record.deleted'])
      const made = (await api('POST', '/v1/qrcodes', alice, { url: 'https://example.com/a', name: 'Static one' })).body.created[0]
      await arrived('/ok/alice', 1)
      expect((await api('PATCH', `/v1/qrcodes/${made.qr_id}`, alice, { name: 'Renamed' })).status).toBe(200)
      await arrived('/ok/alice', 2)
      expect((await api('DELETE', `/v1/qrcodes/${made.qr_id}`, alice)).status).toBe(200)
      await arrived('/ok/alice', 3)
      const dyn = (await api('POST', '/v1/dynqrcodes', alice, { destination_url: 'https://example.com/d', name: 'Dynamic one' })).body.created[0]
      await arrived('/ok/alice', 4)

      const got = receiver.at('/ok/alice')
      expect(got.every((r) => verified(hook.secret, r))).toBe(true)
      expect(got.map((r) => r.body.type)).toEqual(['record.created', 'record.updated', 'record.deleted', 'record.created'])
      expect(new Set(got.map((r) => r.id)).size).toBe(4)
      expect(got[0]!.body.data).toEqual({ kind: 'static', ...made })
      expect(got[1]!.body.data).toMatchObject({ kind: 'static', qr_id: made.qr_id, name: 'Renamed' })
      expect(got[2]!.body.data).toEqual({ kind: 'static', qr_id: made.qr_id, deleted_at: expect.any(Number), updated_at: expect.any(Number) })
      expect(got[3]!.body.data).toEqual({ kind: 'dynamic', ...dyn })
      expect(Number.isNaN(Date.parse(got[0]!.body.timestamp))).toBe(false)
      // The timestamp header is epoch seconds; a tampered body fails the check.
      expect(got[0]!.timestamp).toMatch(/^\d{10}$/)
      expect(verified(hook.secret, { ...got[0]!, raw: got[0]!.raw.replace('Static one', 'Static two') })).toBe(false)
    })

    it('sends record.updated when a team admin approves a writer\'s pending change', async () => {
      const [admin, writer] = [libs.teamAdmin.key, libs.teamWriter.key]
      await createHook(admin, '/ok/review', ['record.updated'])
      const draft = (await api('POST', '/v1/dynqrcodes', writer, { destination_url: 'https://example.com/approved', name: 'Poster' })).body.created[0]
      expect((await api('PATCH', `/v1/dynqrcodes/${draft.code}`, admin, { status: 'active' })).status).toBe(200)
      const proposed = await api('PATCH', `/v1/dynqrcodes/${draft.code}`, writer, { destination_url: 'https://example.com/proposed' })
      expect(proposed.body.pending_change.destination_url).toBe('https://example.com/proposed')
      const approved = await api('POST', `/v1/dynqrcodes/${draft.code}/review`, admin, { decision: 'approve' })
      expect([approved.status, approved.body.destination_url]).toEqual([200, 'https://example.com/proposed'])
      // Three updates: the activation, the writer's proposal, the approval (deliveries may arrive in any order).
      await arrived('/ok/review', 3)
      const sent = receiver.at('/ok/review').map((r) => r.body.data)
      expect(sent).toContainEqual({ kind: 'dynamic', ...proposed.body })
      expect(sent).toContainEqual({ kind: 'dynamic', ...approved.body })
    })

    it('sends a scan of a dynamic code to the endpoints subscribed to scans', async () => {
      const own: Member = await freshMember(stack())
      const hook = await createHook(own.key, '/ok/scans', ['scan'])
      const code = (await api('POST', '/v1/dynqrcodes', own.key, { destination_url: 'https://example.com/menu', name: 'Menu' })).body.created[0].code
      expect((await stack().short(`/${code}`, { headers: { 'user-agent': BROWSER } })).status).toBe(302)
      await arrived('/ok/scans', 1)
      const [scan] = receiver.at('/ok/scans')
      expect(verified(hook.secret, scan!)).toBe(true)
      expect(scan!.body).toMatchObject({ type: 'scan', data: { code, scan_id: expect.any(String), visitor_id: expect.stringMatching(/^[0-9a-f]{64}$/) } })
      // Only scans: the code's creation was not sent here.
      expect(receiver.at('/ok/scans')).toHaveLength(1)
    })

    it('sends scans to an endpoint created after the library\'s codes were already scanned', async () => {
      const own: Member = await freshMember(stack())
      const code = (await api('POST', '/v1/dynqrcodes', own.key, { destination_url: 'https://example.com/late', name: 'Late' })).body.created[0].code
      // Scanned while the library has no endpoint: the workers remember it has no scan subscribers...
      expect((await stack().short(`/${code}`, { headers: { 'user-agent': BROWSER } })).status).toBe(302)
      await Bun.sleep(500)
      // ...until an endpoint is created: the very next scan reaches it (a stale memory would drop it).
      await createHook(own.key, '/ok/late-scans', ['scan'])
      expect((await stack().short(`/${code}`, { headers: { 'user-agent': BROWSER } })).status).toBe(302)
      await arrived('/ok/late-scans', 1)
      expect(receiver.at('/ok/late-scans')[0]!.body).toMatchObject({ type: 'scan', data: { code } })
    })

    it('sends record events to an endpoint created right after the library\'s last write', async () => {
      const own: Member = await freshMember(stack())
      // Written while the library has no endpoint: the workers remember it has no subscribers...
      await api('POST', '/v1/qrcodes', own.key, { url: 'https://example.com/before', name: 'Before' })
      await Bun.sleep(300)
      // ...until an endpoint is created: the very next write reaches it (a stale memory would drop it).
      await createHook(own.key, '/ok/late-records', ['record.created'])
      await api('POST', '/v1/qrcodes', own.key, { url: 'https://example.com/after', name: 'After' })
      await arrived('/ok/late-records', 1)
      expect(receiver.at('/ok/late-records').map((r) => r.body.data.name)).toEqual(['After'])
    })

    it('retries a failed delivery with the same webhook-id until a 2xx, and lists every attempt', async () => {
      const own = await freshMember(stack())
      const hook = await createHook(own.key, '/fail2/retry', ['record.created'])
      await api('POST', '/v1/qrcodes', own.key, { url: 'https://example.com/r', name: 'Retried' })
      await arrived('/fail2/retry', 3)
      const got = receiver.at('/fail2/retry')
      expect(new Set(got.map((r) => r.id)).size).toBe(1)
      expect(got.every((r) => verified(hook.secret, r))).toBe(true)
      let deliveries: any[] = []
      await waitUntil(async () => {
        deliveries = (await api('GET', `/v1/webhooks/${hook.id}/deliveries`, own.key)).body.deliveries
        return deliveries.length >= 3 && deliveries[0].status === 'delivered'
      }, 5000, 'three attempts listed')
      expect(receiver.at('/fail2/retry')).toHaveLength(3)
      expect(deliveries.map((d) => [d.attempt, d.status, d.http_status, d.webhook_id, d.event_type])).toEqual([
        [3, 'delivered', 204, got[0]!.id, 'record.created'],
        [2, 'failed', 500, got[0]!.id, 'record.created'],
        [1, 'failed', 500, got[0]!.id, 'record.created'],
      ])
      expect(deliveries[0].next_attempt_at).toBeNull()
      expect(deliveries[1].next_attempt_at).toBeGreaterThanOrEqual(deliveries[1].attempted_at)
      expect(deliveries[0].error).toBeNull()
      expect(deliveries[2].error).toContain('500')
    })

    it('disables an endpoint whose every delivery failed for the retry window; it then gets nothing new', async () => {
      const own = await freshMember(stack())
      const hook = await createHook(own.key, '/down/always', ['record.created'])
      await api('POST', '/v1/qrcodes', own.key, { url: 'https://example.com/x', name: 'Never delivered' })
      await waitUntil(async () => (await api('GET', '/v1/webhooks', own.key)).body.webhooks[0].status === 'disabled', 10_000, 'the endpoint disabled')
      const [listed] = (await api('GET', '/v1/webhooks', own.key)).body.webhooks
      expect(listed).toMatchObject({ id: hook.id, status: 'disabled', disabled_at: expect.any(Number) })
      const attempts = receiver.at('/down/always').length
      expect(attempts).toBeGreaterThan(2)
      const deliveries = (await api('GET', `/v1/webhooks/${hook.id}/deliveries`, own.key)).body.deliveries
      expect(deliveries[0]).toMatchObject({ status: 'failed', http_status: 500, next_attempt_at: null })
      await api('POST', '/v1/qrcodes', own.key, { url: 'https://example.com/y', name: 'After disabling' })
      await Bun.sleep(500)
      expect(receiver.at('/down/always')).toHaveLength(attempts)
      if (opts.metrics) {
        // Operators see it too: attempts by outcome, the delivery given up, the endpoint disabled.
        const metrics = await (await stack().request('/metrics')).text()
        expect(sample(metrics, 'lr_webhook_attempts_total{event_type="record.created",outcome="failed"}')).toBeGreaterThanOrEqual(attempts)
        expect(sample(metrics, 'lr_webhook_deliveries_given_up_total')).toBeGreaterThanOrEqual(1)
        expect(sample(metrics, 'lr_webhook_endpoints_disabled_total')).toBeGreaterThanOrEqual(1)
      }
    })

    it('gives an attempt WEBHOOK_TIMEOUT_MS, then retries it', async () => {
      const own = await freshMember(stack())
      const hook = await createHook(own.key, '/hang/timeout', ['record.created'])
      await api('POST', '/v1/qrcodes', own.key, { url: 'https://example.com/t', name: 'Slow receiver' })
      await arrived('/hang/timeout', 2, 15_000)
      let deliveries: any[] = []
      await waitUntil(async () => {
        deliveries = (await api('GET', `/v1/webhooks/${hook.id}/deliveries`, own.key)).body.deliveries
        return deliveries.length === 2
      }, 5000, 'two attempts listed')
      expect(deliveries.map((d) => [d.attempt, d.status, d.http_status, d.error])).toEqual([[2, 'delivered', 204, null], [1, 'failed', null, 'no answer within 1000 ms']])
      expect(deliveries[1].duration_ms).toBeGreaterThanOrEqual(900)
    })

    it('does not follow a redirect: a 3xx is a failed attempt', async () => {
      const own = await freshMember(stack())
      const hook = await createHook(own.key, '/redirect/x', ['record.created'])
      await api('POST', '/v1/qrcodes', own.key, { url: 'https://example.com/r', name: 'Redirected' })
      await arrived('/redirect/x', 2)
      const deliveries = (await api('GET', `/v1/webhooks/${hook.id}/deliveries`, own.key)).body.deliveries
      expect(deliveries.at(-1)).toMatchObject({ attempt: 1, status: 'failed', http_status: 307 })
      expect(receiver.at('/ok/redirected')).toHaveLength(0)
      await api('DELETE', `/v1/webhooks/${hook.id}`, own.key)
    })

    it('keeps at most 10 endpoints per library', async () => {
      const own = await freshMember(stack())
      for (let n = 0; n < 10; n++) await createHook(own.key, `/ok/many-${n}`, ['record.deleted'])
      const eleventh = await api('POST', '/v1/webhooks', own.key, { url: receiver.url('/ok/many-10'), events: ['record.deleted'] })
      expect([eleventh.status, eleventh.body.error]).toEqual([400, 'a library has at most 10 webhooks; delete one first'])
      expect((await api('GET', '/v1/webhooks', own.key)).body.webhooks).toHaveLength(10)
    })

    it("keeps another library's endpoints invisible (404) and deletes one's own", async () => {
      const hook = await createHook(libs.adminPersonal.key, '/ok/mine', ['record.deleted'])
      const other = libs.alice.key
      const answers = await Promise.all([api('DELETE', `/v1/webhooks/${hook.id}`, other), api('GET', `/v1/webhooks/${hook.id}/deliveries`, other)])
      expect(answers.map((a) => [a.status, a.body.error])).toEqual([[404, `no webhook "${hook.id}" in this library`], [404, `no webhook "${hook.id}" in this library`]])
      expect((await api('GET', '/v1/webhooks', other)).body.webhooks.map((w: { id: string }) => w.id)).not.toContain(hook.id)
      // The same account's team key acts on another library too.
      expect((await api('DELETE', `/v1/webhooks/${hook.id}`, libs.teamAdmin.key)).status).toBe(404)

      expect((await api('DELETE', `/v1/webhooks/${hook.id}`, libs.adminPersonal.key)).body).toEqual({ deleted: hook.id })
      expect((await api('GET', '/v1/webhooks', libs.adminPersonal.key)).body).toEqual({ webhooks: [] })
      expect((await api('GET', `/v1/webhooks/${hook.id}/deliveries`, libs.adminPersonal.key)).status).toBe(404)
    })

    it("sends a team writer's edits to the team admin's endpoint", async () => {
      const hook = await createHook(libs.teamAdmin.key, '/ok/team', ['record.created'])
      const made = (await api('POST', '/v1/qrcodes', libs.teamWriter.key, { url: 'https://example.com/t', name: 'By the writer' })).body.created[0]
      await arrived('/ok/team', 1)
      const [got] = receiver.at('/ok/team')
      expect(verified(hook.secret, got!)).toBe(true)
      expect(got!.body.data).toMatchObject({ kind: 'static', qr_id: made.qr_id, created_by: libs.teamWriter.account_id })
    })

    // A deployment with separate processes (TRANSPORT=nats) only.
    if (opts.crash) {
      it('loses no event when the webhooks worker is killed (kill -9) and started again: at least once', async () => {
        const own = await freshMember(stack())
        const hook = await createHook(own.key, '/ok/crash', ['record.created'])
        await stack().killProcess!('webhooks')
        const made = []
        for (let n = 0; n < 5; n++) made.push((await api('POST', '/v1/qrcodes', own.key, { url: `https://example.com/${n}`, name: `During the outage ${n}` })).body.created[0].qr_id)
        await Bun.sleep(300)
        expect(receiver.at('/ok/crash')).toHaveLength(0)
        await stack().startProcess!('webhooks')
        await arrived('/ok/crash', 5, 20_000)
        const got = receiver.at('/ok/crash')
        expect(got.every((r) => verified(hook.secret, r))).toBe(true)
        expect(new Set(got.map((r) => r.body.data.qr_id))).toEqual(new Set(made))
      }, 40_000)

      it('sends a delivery again, with the same webhook-id, when the worker was killed during its attempt', async () => {
        const own = await freshMember(stack())
        const hook = await createHook(own.key, '/hang/crash', ['record.created'])
        await api('POST', '/v1/qrcodes', own.key, { url: 'https://example.com/h', name: 'Mid-attempt' })
        await arrived('/hang/crash', 1)
        await stack().killProcess!('webhooks')
        await stack().startProcess!('webhooks')
        // The dead worker's claim runs out WEBHOOK_TIMEOUT_MS + 5 s after it was taken.
        await arrived('/hang/crash', 2, 20_000)
        const got = receiver.at('/hang/crash')
        expect([got[1]!.id, verified(hook.secret, got[1]!)]).toEqual([got[0]!.id, true])
        let deliveries: any[] = []
        await waitUntil(async () => {
          deliveries = (await api('GET', `/v1/webhooks/${hook.id}/deliveries`, own.key)).body.deliveries
          return deliveries.length === 1
        }, 5000, 'the attempt listed')
        expect(deliveries.map((d) => [d.attempt, d.status, d.http_status, d.webhook_id])).toEqual([[2, 'delivered', 204, got[0]!.id]])
      }, 40_000)
    }
  })
}
