import { describe, expect, it, setSystemTime } from 'bun:test'
import { mongoReceipts, PENDING_GRACE_MS } from '@lr/platform/idempotency-mongo'
import { connectMongo } from '@lr/platform/mongo'
import { createMongoWebhookStore, DEAD_CLAIM_MS } from '../src/adapters/webhook-store.mongo'
import { createDeliveryWorker } from '../src/worker'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../../test/harness/ferretdb'
import { endpointOf, receiptOf, webhookStoreContract } from './webhook-store.contract'
import { workerFairnessSuite } from './worker-fairness'

// FerretDB started by the harness, or MONGODB_URL; see README "MongoDB compatibility".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo webhook store suite: ${skip}`)

describe.skipIf(Boolean(skip))('WebhookStore on MongoDB', () => {
  const url = useMongoServer()
  const open = async () => {
    const db = await freshDatabase(url(), 'lr_webhooks_test')
    return { store: await createMongoWebhookStore(db.conn), cleanup: db.cleanup }
  }
  webhookStoreContract(open)
  workerFairnessSuite(open)
})

describe.skipIf(Boolean(skip))('WebhookStore on MongoDB, a database made before due skipped endpoints', () => {
  const url = useMongoServer()
  it('replaces the old due and endpoint indexes with ones that carry the endpoint and the due time, and opens again', async () => {
    const db = await freshDatabase(url(), 'lr_webhooks_upgrade')
    try {
      await db.conn.db!.collection('webhook_messages').createIndex({ state: 1, next_attempt_at: 1 })
      await db.conn.db!.collection('webhook_messages').createIndex({ endpoint_id: 1 })
      await createMongoWebhookStore(db.conn)
      await createMongoWebhookStore(db.conn)
      const names = (await db.conn.db!.collection('webhook_messages').indexes()).map((i) => i.name).sort()
      expect(names).toEqual(['_id_', 'endpoint_id_1_state_1_next_attempt_at_1', 'state_1_next_attempt_at_1_endpoint_id_1'])
    } finally {
      await db.cleanup()
    }
  })
})

// Two workers, each on its own connection (separate processes): FerretDB lets several
// compare-and-set writers win, so a claim must be decided by a unique key.
describe.skipIf(Boolean(skip))('WebhookStore on MongoDB, two workers claiming', () => {
  const url = useMongoServer()
  it('lets exactly one worker claim each due message', async () => {
    const name = `lr_webhooks_claims_${crypto.randomUUID().slice(0, 8)}`
    const bases = await Promise.all([connectMongo(url()), connectMongo(url())])
    try {
      const [a, b] = await Promise.all(bases.map((base) => createMongoWebhookStore(base.useDb(name, { useCache: false }))))
      const ids = Array.from({ length: 40 }, (_, n) => `m${n}`)
      await a!.enqueue(ids.map((id) => ({ id, endpoint_id: 'wh_1', library: 'acct:x', event_type: 'scan', event_id: id, body: '{}', attempts: 0, created_at: 1, next_attempt_at: 1, state: 'pending' })))
      const won = await Promise.all(ids.flatMap((id) => [a!.claim(id, 1, 5000), b!.claim(id, 1, 6000)]))
      expect(won.filter(Boolean)).toHaveLength(ids.length)
      expect((await a!.due(1e12, 100)).every((m) => m.attempts === 1)).toBe(true)
    } finally {
      await bases[0]!.useDb(name, { useCache: false }).dropDatabase()
      await Promise.all(bases.map((base) => base.close()))
    }
  })
})

// Due times and claims are read by the database server's clock (platform/src/mongo-clock.ts): a
// replica whose own clock runs ahead must not take a message another worker is still sending.
describe.skipIf(Boolean(skip))('WebhookStore on MongoDB, two workers whose clocks disagree', () => {
  const url = useMongoServer()
  it('leaves a message claimed by one worker alone in a worker whose own clock runs a minute ahead', async () => {
    const name = `lr_webhooks_clocks_${crypto.randomUUID().slice(0, 8)}`
    const bases = await Promise.all([connectMongo(url()), connectMongo(url())])
    // The endpoint answers only once the test lets it: the first attempt stays in flight.
    const waiting: ((response: Response) => void)[] = []
    const answerAll = () => waiting.splice(0).forEach((answer) => answer(new Response(null, { status: 204 })))
    let received = 0
    const endpoint = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => (received++, new Promise<Response>((resolve) => void waiting.push(resolve))) })
    const settings = { allowPrivate: true, retryBaseMs: 60_000, retryMaxMs: 3_600_000, retryWindowMs: 86_400_000, timeoutMs: 10_000 }
    const workers: ReturnType<typeof createDeliveryWorker>[] = []
    try {
      const [a, b] = await Promise.all(bases.map((base) => createMongoWebhookStore(base.useDb(name, { useCache: false }))))
      const now = Date.now()
      await a!.insertEndpoint({ id: 'wh_1', library: 'acct:x', url: `http://127.0.0.1:${endpoint.port}/hook`, events: ['scan'], status: 'enabled', created_at: Math.floor(now / 1000), disabled_at: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', last_success_at: null })
      await a!.enqueue([{ id: 'msg_1', endpoint_id: 'wh_1', library: 'acct:x', event_type: 'scan', event_id: 'evt_1', body: '{}', attempts: 0, created_at: now, next_attempt_at: now, state: 'pending' }])
      workers.push(createDeliveryWorker({ store: a!, settings }))
      workers[0]!.start()
      for (let i = 0; i < 200 && received === 0; i++) await Bun.sleep(10)
      expect(received).toBe(1) // claimed until 15 s from now (the timeout and 5 s)
      setSystemTime(new Date(Date.now() + 60_000))
      try {
        workers.push(createDeliveryWorker({ store: b!, settings }))
        workers[1]!.start()
        await Bun.sleep(700) // more than one poll (500 ms)
        expect(received).toBe(1)
      } finally {
        setSystemTime()
      }
    } finally {
      answerAll()
      await Promise.all(workers.map((worker) => worker.stop()))
      await endpoint.stop(true)
      await bases[0]!.useDb(name, { useCache: false }).dropDatabase()
      await Promise.all(bases.map((base) => base.close()))
    }
  })
})

// A creator killed (kill -9) between its receipt and its endpoint, on a server without
// transactions: the next reader of the receipt writes the endpoint, once, and answers the receipt.
describe.skipIf(Boolean(skip))('WebhookStore on MongoDB, a dead writer\'s receipt', () => {
  const url = useMongoServer()
  const since = () => Math.floor(Date.now() / 1000) - 60
  const deadWriter = async (inserted: boolean) => {
    const db = await freshDatabase(url(), 'lr_webhooks_dead')
    const store = await createMongoWebhookStore(db.conn)
    const { id, ...fields } = endpointOf('wh_dead')
    const doc = { _id: id, ...fields, seq: 1 }
    // (The test's FerretDB runs on this machine: its clock is this one.)
    const receipt = receiptOf(id)
    await (await mongoReceipts(db.conn)).write(receipt, undefined, { write: { in: 'webhook_endpoints', docs: [doc] }, at: Date.now() - PENDING_GRACE_MS - 1000 })
    if (inserted) await db.conn.db!.collection('webhook_endpoints').insertOne(doc as never)
    return { store, db, receipt }
  }

  for (const inserted of [false, true]) {
    it(`answers the receipt with the endpoint stored once (the dead writer ${inserted ? 'had' : 'had not'} inserted it)`, async () => {
      const { store, db, receipt } = await deadWriter(inserted)
      try {
        expect(await store.findReceipt('key_1', 'idem-1', since())).toEqual(receipt)
        expect(await store.listEndpoints(endpointOf('wh_dead').library)).toEqual([endpointOf('wh_dead')])
        // Settled: a second reader finds nothing to finish and writes nothing more.
        expect((await (await mongoReceipts(db.conn)).findReceipt('key_1', 'idem-1', since()))?.pending).toBeNull()
        expect(await store.findReceipt('key_1', 'idem-1', since())).toEqual(receipt)
        expect(await db.conn.db!.collection('webhook_endpoints').countDocuments()).toBe(1)
      } finally {
        await db.cleanup()
      }
    })
  }
})

// A worker killed (kill -9) between its claim's two writes: the claim's key is stored, the
// message still due at the claimed time. A probe lost 2 of 400 messages so in 12 kills: never
// sent again, and first in every due look.
describe.skipIf(Boolean(skip))('WebhookStore on MongoDB, a worker killed between its claim\'s two writes', () => {
  const url = useMongoServer()
  const settings = { allowPrivate: true, retryBaseMs: 100, retryMaxMs: 1_000, retryWindowMs: 60_000, timeoutMs: 1_000 }
  const deadClaim = async (ageMs: number) => {
    const db = await freshDatabase(url(), 'lr_webhooks_dead_claim')
    const store = await createMongoWebhookStore(db.conn)
    const received: string[] = []
    const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => (received.push(request.headers.get('webhook-id')!), new Response(null, { status: 204 })) })
    const now = Date.now()
    await store.insertEndpoint({ ...endpointOf('wh_1'), url: `http://127.0.0.1:${server.port}/hook`, created_at: Math.floor(now / 1000) })
    await store.enqueue([{ id: 'msg_1', endpoint_id: 'wh_1', library: endpointOf('wh_1').library, event_type: 'record.created', event_id: 'evt_1', body: '{}', attempts: 0, created_at: now, next_attempt_at: now, state: 'pending' }])
    // What the dead worker's first write left. (The test's FerretDB runs on this machine: its clock is this one.)
    await db.conn.db!.collection<{ _id: string; at: number }>('webhook_claims').insertOne({ _id: `msg_1@${now}`, at: Date.now() - ageMs })
    const worker = createDeliveryWorker({ store, settings })
    worker.start()
    return {
      received,
      async [Symbol.asyncDispose]() {
        await worker.stop()
        await server.stop(true)
        await db.cleanup()
      },
    }
  }

  it('sends the message once the dead claim is older than any claim takes', async () => {
    await using probe = await deadClaim(DEAD_CLAIM_MS + 1_000)
    for (let i = 0; i < 60 && probe.received.length === 0; i++) await Bun.sleep(50)
    expect(probe.received).toEqual(['msg_1'])
  }, 10_000)

  it('leaves a claim younger than that to its claimant', async () => {
    await using probe = await deadClaim(0)
    await Bun.sleep(1_500) // three polls
    expect(probe.received).toEqual([])
  }, 10_000)
})
