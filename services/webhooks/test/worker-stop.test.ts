import { afterEach, describe, expect, it } from 'bun:test'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteWebhookStore } from '../src/adapters/webhook-store.sqlite'
import { createDeliveryWorker } from '../src/worker'

// A rolling update sends the webhooks worker SIGTERM while its loop is in the middle of a look:
// it has read up to 32 due messages and claims them one after another. It went on claiming and
// sending them after stop(), so the stop waited for attempts begun after it (each up to
// WEBHOOK_TIMEOUT_MS) and the messages were claimed away from the replicas that go on. A probe on
// FerretDB saw the worker's part of a SIGTERM take 3.7 s.
const settings = { allowPrivate: true, retryBaseMs: 60_000, retryMaxMs: 3_600_000, retryWindowMs: 86_400_000, timeoutMs: 5_000 }

let cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  cleanups = []
})

describe('stopping the delivery worker', () => {
  it('begins no attempt once stop() is called, even of what a look under way read; those messages stay due, unclaimed', async () => {
    const received: { id: string; at: number }[] = []
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: async (request) => {
      received.push({ id: request.headers.get('webhook-id')!, at: performance.now() })
      await Bun.sleep(200)
      return new Response(null, { status: 204 })
    } })
    cleanups.push(() => server.stop(true))
    const db = openSqlite(':memory:')
    cleanups.push(() => db.close())
    const store = createSqliteWebhookStore(db)
    const now = Date.now()
    // Four libraries of one endpoint each, eight due messages each: one look starts 16 attempts.
    for (let l = 0; l < 4; l++) {
      const library = `acct:a${l}`
      await store.insertEndpoint({ id: `wh_${l}`, library, url: `http://127.0.0.1:${server.port}/hook`, events: ['scan'], status: 'enabled', created_at: Math.floor(now / 1000), disabled_at: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', last_success_at: null })
      await store.enqueue(Array.from({ length: 8 }, (_, n) => ({ id: `msg_${l}_${n}`, endpoint_id: `wh_${l}`, library, event_type: 'scan', event_id: `evt_${l}_${n}`, body: '{"type":"scan"}', attempts: 0, created_at: now, next_attempt_at: now, state: 'pending' as const })))
    }
    const worker = createDeliveryWorker({ store, settings })
    worker.start() // its first look is under way (waiting on the store) when the stop comes
    const stopping = performance.now()
    await worker.stop()
    await Bun.sleep(300) // an attempt begun late would reach the receiver by now

    expect(received.filter((r) => r.at >= stopping).map((r) => r.id)).toEqual([])
    expect((await store.due(Date.now(), 100)).length).toBe(32)
  })
})
