// One message delivered by a real delivery worker (createDeliveryWorker, an in-memory SQLite
// store) to a URL whose host the test resolves. Also a script, for the TLS test: a child process
// started with NODE_EXTRA_CA_CERTS (read only at a process's start) trusts the test certificate.
//   bun services/webhooks/test/deliver-once.ts <url> <address>[,<address>...]
// prints the stored attempt and the names looked up, as JSON.
import type { WebhookAttempt } from '@lr/proto'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteWebhookStore } from '../src/adapters/webhook-store.sqlite'
import { createDeliveryWorker } from '../src/worker'

export interface Delivered {
  attempt: WebhookAttempt
  /** Every name the worker asked `resolve` for. */
  lookups: string[]
}

export async function deliverOnce(url: string, addresses: string[], allowPrivate = true): Promise<Delivered> {
  const db = openSqlite(':memory:')
  const store = createSqliteWebhookStore(db)
  const library = 'acct:a1'
  const now = Date.now()
  await store.insertEndpoint({ id: 'wh_1', library, url, events: ['scan'], status: 'enabled', created_at: Math.floor(now / 1000), disabled_at: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', last_success_at: null })
  await store.enqueue([{ id: 'msg_1', endpoint_id: 'wh_1', library, event_type: 'scan', event_id: 'evt_1', body: '{"type":"scan"}', attempts: 0, created_at: now, next_attempt_at: now, state: 'pending' }])
  const lookups: string[] = []
  const settings = { allowPrivate, retryBaseMs: 60_000, retryMaxMs: 3_600_000, retryWindowMs: 86_400_000, timeoutMs: 5_000 }
  const worker = createDeliveryWorker({ store, settings, resolve: async (host) => (lookups.push(host), addresses) })
  worker.start()
  try {
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      const [attempt] = await store.attempts('wh_1', 1)
      if (attempt) return { attempt, lookups }
      await Bun.sleep(10)
    }
    throw new Error(`no attempt to ${url} within 10 s`)
  } finally {
    await worker.stop()
    db.close()
  }
}

if (import.meta.main) {
  const [url, addresses] = process.argv.slice(2)
  console.log(JSON.stringify(await deliverOnce(url!, addresses!.split(','))))
}
