import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, it } from 'bun:test'
import type { RecordEvent } from '@lr/proto'
import { createSqliteWebhookStore } from '../src/adapters/webhook-store.sqlite'
import { createWebhookService } from '../src/service'
import { createDeliveryWorker } from '../src/worker'

// An intake remembers a library's subscribers for SUBSCRIBERS_TTL_MS (src/service.ts), so an
// event taken in just after an endpoint was deleted is still stored for it. The worker found the
// endpoint gone at the attempt and returned without settling: the message stayed pending, was
// claimed again each time its claim ran out (timeout + 5 s), for ever.
const settings = { allowPrivate: true, retryBaseMs: 100, retryMaxMs: 1_000, retryWindowMs: 60_000, timeoutMs: 1_000 }
const LIBRARY = 'acct:a1'
const created = (n: number): RecordEvent => ({ id: `evt_${n}`, type: 'record.created', library: LIBRARY, timestamp: new Date().toISOString(), data: { n } })

let stops: (() => unknown)[] = []
afterEach(async () => {
  for (const stop of stops.reverse()) await stop()
  stops = []
})

describe('a message stored for an endpoint deleted meanwhile', () => {
  it('is dropped at its first attempt, sending nothing, not claimed again and again', async () => {
    const received: string[] = []
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => (received.push(request.headers.get('webhook-id')!), new Response(null, { status: 204 })) })
    stops.push(() => server.stop(true))
    const store = createSqliteWebhookStore(new Database(':memory:'))
    const worker = createDeliveryWorker({ store, settings })
    const service = createWebhookService({ store, settings, libraryOfCode: async () => LIBRARY, wake: worker.wake })
    const owner = { key_id: 'key_1', account_id: 'a1', team_id: null, role: null } as never
    const { id } = await service.create(owner, { url: `http://127.0.0.1:${server.port}/hook`, events: ['record.created'] })
    worker.start()
    stops.push(() => worker.stop())
    await service.ingestRecords([created(1)]) // remembers the subscribers
    for (let i = 0; i < 100 && received.length === 0; i++) await Bun.sleep(20)
    expect(received).toHaveLength(1)

    await service.delete(owner, id)
    await service.ingestRecords([created(2)]) // within SUBSCRIBERS_TTL_MS: still stored for the endpoint
    await Bun.sleep(300)
    expect(received).toHaveLength(1)
    expect(await store.due(Date.now() + 3_600_000, 100)).toEqual([])
  })

  it('leaves no attempt behind when the endpoint is deleted while its attempt is under way', async () => {
    const store = createSqliteWebhookStore(new Database(':memory:'))
    const worker = createDeliveryWorker({ store, settings })
    const service = createWebhookService({ store, settings, libraryOfCode: async () => LIBRARY, wake: worker.wake })
    const owner = { key_id: 'key_1', account_id: 'a1', team_id: null, role: null } as never
    let id = ''
    let answered = false
    // The receiver's owner deletes the endpoint before the receiver answers.
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async () => {
      await service.delete(owner, id)
      answered = true
      return new Response(null, { status: 204 })
    } })
    stops.push(() => server.stop(true))
    id = (await service.create(owner, { url: `http://127.0.0.1:${server.port}/hook`, events: ['record.created'] })).id
    worker.start()
    stops.push(() => worker.stop())
    await service.ingestRecords([created(1)])
    for (let i = 0; i < 100 && !answered; i++) await Bun.sleep(20)
    await Bun.sleep(100)
    expect(answered).toBe(true)
    expect(await store.attempts(id, 100)).toEqual([])
  })
})
