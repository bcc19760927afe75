import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { type Receipt, ReceiptTaken } from '@lr/proto'
import { EndpointLimitReached, type StoredAttempt, type StoredEndpoint, type StoredMessage, type WebhookStore } from '../src/ports'

export interface WebhookStoreHarness {
  store: WebhookStore
  cleanup(): Promise<void>
}

const A = 'team:t1'
const B = 'acct:a2'
const endpoint = (id: string, library = A, over: Partial<StoredEndpoint> = {}): StoredEndpoint => ({
  id, library, url: `https://example.com/${id}`, events: ['record.created', 'scan'], status: 'enabled', created_at: 1_800_000_000,
  disabled_at: null, secret: `whsec_${id}`, last_success_at: null, ...over,
})
const message = (id: string, endpointId: string, over: Partial<StoredMessage> = {}): StoredMessage => ({
  id, endpoint_id: endpointId, library: A, event_type: 'record.created', event_id: `evt_${id}`, body: `{"id":"${id}"}`,
  attempts: 0, created_at: 1000, next_attempt_at: 1000, state: 'pending', ...over,
})
/** A create's receipt as the service writes it: created_at in epoch seconds, the answer with its secret. */
export const receiptOf = (id: string, over: Partial<Receipt> = {}): Receipt => ({
  scope: 'key_1', key: 'idem-1', fingerprint: 'f1', response: { id, secret: `whsec_${id}` }, created_at: Math.floor(Date.now() / 1000), ...over,
})
export { endpoint as endpointOf }
const attempt = (m: StoredMessage, n: number, over: Partial<StoredAttempt> = {}): StoredAttempt => ({
  endpoint_id: m.endpoint_id, webhook_id: m.id, event_type: m.event_type, event_id: m.event_id, attempt: n, status: 'failed',
  http_status: 500, error: 'answered 500', attempted_at: 2000 + n, duration_ms: 5, next_attempt_at: 3000 + n, ...over,
})

/** What every WebhookStore adapter must do; run on SQLite and on MongoDB (FerretDB). */
export function webhookStoreContract(open: () => Promise<WebhookStoreHarness>) {
  let h: WebhookStoreHarness
  let store: WebhookStore
  beforeEach(async () => {
    h = await open()
    store = h.store
  })
  afterEach(() => h.cleanup())

  describe('endpoints', () => {
    it('lists the library’s endpoints oldest first, with their fields, and no other library’s', async () => {
      for (const id of ['wh_1', 'wh_2']) await store.insertEndpoint(endpoint(id))
      await store.insertEndpoint(endpoint('wh_3', B))
      expect(await store.listEndpoints(A)).toEqual([endpoint('wh_1'), endpoint('wh_2')])
      expect(await store.getEndpoint(A, 'wh_3')).toBeNull()
      expect(await store.getEndpoint(B, 'wh_3')).toEqual(endpoint('wh_3', B))
    })

    it('finds the enabled subscribers of an event type only', async () => {
      await store.insertEndpoint(endpoint('wh_1'))
      await store.insertEndpoint(endpoint('wh_2', A, { events: ['record.deleted'] }))
      await store.insertEndpoint(endpoint('wh_3'))
      await store.disableEndpoint('wh_3', 1_800_000_100)
      expect((await store.subscribers(A, 'scan')).map((e) => e.id)).toEqual(['wh_1'])
      expect((await store.subscribers(A, 'record.deleted')).map((e) => e.id)).toEqual(['wh_2'])
      expect(await store.getEndpoint(A, 'wh_3')).toMatchObject({ status: 'disabled', disabled_at: 1_800_000_100 })
    })

    it('deletes an endpoint of the library with its messages and attempts; not another library’s', async () => {
      await store.insertEndpoint(endpoint('wh_1'))
      const m = message('m1', 'wh_1')
      await store.enqueue([m])
      await store.settle({ ...m, attempts: 1 }, attempt(m, 1), 10)
      expect(await store.deleteEndpoint(B, 'wh_1')).toBe(false)
      expect(await store.deleteEndpoint(A, 'wh_1')).toBe(true)
      expect([await store.listEndpoints(A), await store.due(10_000, 10), await store.attempts('wh_1', 10)]).toEqual([[], [], []])
    })

    it('records no attempt of a message no longer stored (its endpoint deleted during the attempt)', async () => {
      await store.insertEndpoint(endpoint('wh_1'))
      const m = message('m1', 'wh_1')
      await store.enqueue([m])
      await store.deleteEndpoint(A, 'wh_1')
      await store.settle({ ...m, attempts: 1, state: 'delivered', next_attempt_at: null }, attempt(m, 1), 10)
      expect(await store.attempts('wh_1', 10)).toEqual([])
    })

    it('drops the messages and attempts left of an endpoint that is gone, and no other endpoint’s', async () => {
      await store.insertEndpoint(endpoint('wh_2'))
      const [gone, kept] = [message('m1', 'wh_1'), message('m2', 'wh_2')]
      await store.enqueue([gone, kept])
      await store.settle({ ...gone, attempts: 1 }, attempt(gone, 1), 10)
      await store.dropRemains('wh_1')
      expect([(await store.due(10_000, 10)).map((m) => m.id), await store.attempts('wh_1', 10)]).toEqual([['m2'], []])
    })
  })

  describe('endpoints created with an Idempotency-Key', () => {
    const since = () => Math.floor(Date.now() / 1000) - 60

    it('stores the endpoint and its receipt, which findReceipt answers', async () => {
      const receipt = receiptOf('wh_1')
      await store.insertEndpoint(endpoint('wh_1'), receipt)
      expect(await store.listEndpoints(A)).toEqual([endpoint('wh_1')])
      expect(await store.findReceipt('key_1', 'idem-1', since())).toEqual(receipt)
      expect(await store.findReceipt('key_2', 'idem-1', since())).toBeNull()
    })

    it('refuses a second insert with the same scope and key (ReceiptTaken) and stores no second endpoint', async () => {
      const receipt = receiptOf('wh_1')
      await store.insertEndpoint(endpoint('wh_1'), receipt)
      const second = store.insertEndpoint(endpoint('wh_2'), receiptOf('wh_2', { fingerprint: 'f2' }))
      await expect(second).rejects.toBeInstanceOf(ReceiptTaken)
      expect((await store.listEndpoints(A)).map((e) => e.id)).toEqual(['wh_1'])
      expect(await store.getEndpoint(A, 'wh_2')).toBeNull()
      expect(await store.findReceipt('key_1', 'idem-1', since())).toEqual(receipt)
    })

    it('keeps receipts per scope: the same key under another scope stores its own endpoint', async () => {
      await store.insertEndpoint(endpoint('wh_1'), receiptOf('wh_1'))
      await store.insertEndpoint(endpoint('wh_2', B), receiptOf('wh_2', { scope: 'key_2' }))
      expect((await store.findReceipt('key_2', 'idem-1', since()))?.response).toEqual({ id: 'wh_2', secret: 'whsec_wh_2' })
      expect((await store.listEndpoints(B)).map((e) => e.id)).toEqual(['wh_2'])
    })
  })

  describe('the limit of endpoints', () => {
    const since = () => Math.floor(Date.now() / 1000) - 60
    it('stores at most `limit` endpoints of a library when creates come at once, with or without receipts; another library keeps its own', async () => {
      await store.insertEndpoint(endpoint('wh_0'), undefined, 3)
      const tries = Array.from({ length: 8 }, (_, i) =>
        store.insertEndpoint(endpoint(`wh_${i + 1}`), i % 2 === 0 ? receiptOf(`wh_${i + 1}`, { key: `idem-${i}` }) : undefined, 3))
      const outcomes = await Promise.allSettled(tries)
      const refused = outcomes.filter((o) => o.status === 'rejected')
      expect([outcomes.length - refused.length, refused.length]).toEqual([2, 6])
      for (const o of refused) expect((o as PromiseRejectedResult).reason).toBeInstanceOf(EndpointLimitReached)
      const kept = (await store.listEndpoints(A)).map((e) => e.id)
      expect(kept).toHaveLength(3)
      // A refused create keeps no receipt: its retry is refused again, not answered 201.
      for (let i = 0; i < 8; i += 2) {
        const receipt = await store.findReceipt('key_1', `idem-${i}`, since())
        expect([`wh_${i + 1}`, receipt !== null]).toEqual([`wh_${i + 1}`, kept.includes(`wh_${i + 1}`)])
      }
      await store.insertEndpoint(endpoint('wh_b', B), undefined, 3)
      expect((await store.listEndpoints(B)).map((e) => e.id)).toEqual(['wh_b'])
    })

    it('gives a deleted endpoint\'s place back: the next create fits again', async () => {
      for (const id of ['wh_1', 'wh_2']) await store.insertEndpoint(endpoint(id), undefined, 2)
      await expect(store.insertEndpoint(endpoint('wh_3'), undefined, 2)).rejects.toBeInstanceOf(EndpointLimitReached)
      expect(await store.deleteEndpoint(A, 'wh_1')).toBe(true)
      await store.insertEndpoint(endpoint('wh_3'), undefined, 2)
      expect((await store.listEndpoints(A)).map((e) => e.id)).toEqual(['wh_2', 'wh_3'])
    })
  })

  describe('messages', () => {
    it('stores a message once (a redelivered event leaves it as it is) and gives due ones, earliest first', async () => {
      await store.enqueue([message('m1', 'wh_1', { next_attempt_at: 1500 }), message('m2', 'wh_1', { next_attempt_at: 1200 }), message('m3', 'wh_1', { next_attempt_at: 9000 })])
      await store.enqueue([message('m1', 'wh_1', { body: 'changed', next_attempt_at: 1 })])
      const due = await store.due(2000, 10)
      expect(due.map((m) => m.id)).toEqual(['m2', 'm1'])
      expect(due[1]).toEqual(message('m1', 'wh_1', { next_attempt_at: 1500 }))
    })

    // FerretDB v1.24 never answered an update command in which 100 statements matched a
    // document, and then froze the whole database (README "MongoDB compatibility").
    it('stores 150 messages enqueued twice (a redelivered batch of scans) once each', async () => {
      const many = Array.from({ length: 150 }, (_, i) => message(`s${i}`, 'wh_1', { next_attempt_at: 1000 }))
      await store.enqueue(many)
      await store.enqueue(many)
      expect(await store.due(2000, 1000)).toHaveLength(150)
    }, 30_000)

    it('gives due messages of the endpoints not skipped only, earliest first, however many the skipped ones have', async () => {
      const backlog = Array.from({ length: 50 }, (_, i) => message(`a${i}`, 'wh_1', { next_attempt_at: 1000 + i }))
      await store.enqueue([...backlog, message('b1', 'wh_2', { next_attempt_at: 1200 }), message('c1', 'wh_3', { next_attempt_at: 1100 }), message('c2', 'wh_3', { next_attempt_at: 9000 })])
      expect((await store.due(2000, 2, ['wh_1'])).map((m) => m.id)).toEqual(['c1', 'b1'])
      expect((await store.due(2000, 10, ['wh_1', 'wh_3'])).map((m) => m.id)).toEqual(['b1'])
      expect((await store.due(2000, 3, [])).map((m) => m.id)).toEqual(['a0', 'a1', 'a2'])
    })

    it('gives one endpoint\'s due messages, earliest first, none settled or not yet due', async () => {
      await store.enqueue([
        message('a1', 'wh_1', { next_attempt_at: 1500 }), message('a2', 'wh_1', { next_attempt_at: 1100 }), message('a3', 'wh_1', { next_attempt_at: 9000 }),
        message('a4', 'wh_1', { next_attempt_at: 1200 }), message('b1', 'wh_2', { next_attempt_at: 1000 }),
      ])
      await store.settle({ ...message('a4', 'wh_1'), state: 'delivered', next_attempt_at: null }, attempt(message('a4', 'wh_1'), 1), 10)
      expect((await store.dueOf('wh_1', 2000, 10)).map((m) => m.id)).toEqual(['a2', 'a1'])
      expect((await store.dueOf('wh_1', 2000, 1)).map((m) => m.id)).toEqual(['a2'])
      expect(await store.dueOf('wh_3', 2000, 10)).toEqual([])
    })

    it('lets one claim win: the claim counts the attempt and moves next_attempt_at', async () => {
      await store.enqueue([message('m1', 'wh_1')])
      const claims = await Promise.all([store.claim('m1', 1000, 5000), store.claim('m1', 1000, 6000)])
      const won = claims.filter(Boolean)
      expect(won).toHaveLength(1)
      expect(won[0]).toMatchObject({ attempts: 1 })
      expect(await store.due(4999, 10)).toEqual([])
      expect(await store.claim('m1', 1000, 7000)).toBeNull()
    })

    it('settles: pending again, delivered (the endpoint’s last success), failed; attempts newest first, the newest kept', async () => {
      await store.insertEndpoint(endpoint('wh_1'))
      const m = message('m1', 'wh_1')
      await store.enqueue([m])
      for (let n = 1; n <= 4; n++) await store.settle({ ...m, attempts: n, next_attempt_at: 3000 + n }, attempt(m, n), 3)
      expect((await store.due(3004, 10)).map((x) => [x.id, x.next_attempt_at])).toEqual([['m1', 3004]])
      await store.settle({ ...m, attempts: 5, state: 'delivered', next_attempt_at: null }, attempt(m, 5, { status: 'delivered', http_status: 204, error: null, next_attempt_at: null }), 3)
      const listed = await store.attempts('wh_1', 10)
      expect(listed.map((a) => a.attempt)).toEqual([5, 4, 3])
      const { endpoint_id: _e, ...shown } = attempt(m, 5, { status: 'delivered', http_status: 204, error: null, next_attempt_at: null })
      expect(listed[0]).toEqual(shown)
      expect(await store.due(1e12, 10)).toEqual([])
      expect((await store.getEndpoint(A, 'wh_1'))!.last_success_at).toBe(2005)
    })

    it('disabling an endpoint gives up its pending messages', async () => {
      await store.insertEndpoint(endpoint('wh_1'))
      await store.enqueue([message('m1', 'wh_1'), message('m2', 'wh_2')])
      await store.disableEndpoint('wh_1', 1_800_000_000)
      expect((await store.due(1e12, 10)).map((m) => m.id)).toEqual(['m2'])
    })

    it('purges settled messages stored before a time, never pending ones', async () => {
      await store.enqueue([message('m1', 'wh_1', { created_at: 10 }), message('m2', 'wh_1', { created_at: 10 }), message('m3', 'wh_1', { created_at: 50 }), message('m4', 'wh_1', { created_at: 10 })])
      await store.settle({ ...message('m1', 'wh_1'), state: 'delivered', next_attempt_at: null }, attempt(message('m1', 'wh_1'), 1), 10)
      await store.settle({ ...message('m2', 'wh_1'), state: 'failed', next_attempt_at: null }, attempt(message('m2', 'wh_1'), 1), 10)
      await store.settle({ ...message('m3', 'wh_1'), state: 'delivered', next_attempt_at: null }, attempt(message('m3', 'wh_1'), 1), 10)
      expect(await store.purge(20)).toBe(2)
      // m1 is gone: the same event enqueued again is a new message; m3 (newer) still dedupes.
      await store.enqueue([message('m1', 'wh_1'), message('m3', 'wh_1')])
      expect((await store.due(1e12, 10)).map((m) => m.id).sort()).toEqual(['m1', 'm4'])
    })

    it('answers a ping', async () => {
      expect(await store.ping()).toBe(true)
    })
  })
}
