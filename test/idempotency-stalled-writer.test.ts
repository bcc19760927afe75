// On a MongoDB without transactions (FerretDB) a create writes its Idempotency-Key's receipt
// first, then its records. A writer that stalls in between (a paused VM, a stopped process, a
// slow network) is taken for dead by a retry past PENDING_GRACE_MS, which writes its records:
// when it wakes it must neither take the receipt back nor store its batch again. And a twin
// whose receipt clashed with the first request's, whose write then failed, must run as if alone
// (docs/decisions.md §8). Replicas as their processes open them, each on its own connection;
// one goes through a TCP relay that holds (or cuts) its requests at a chosen command.
import { afterEach, describe, expect, it } from 'bun:test'
import type { Connection } from 'mongoose'
import { loadConfig, type Principal } from '@lr/proto'
import { connectMongo } from '@lr/platform/mongo'
import { supportsTransactions } from '@lr/platform/mongo-insert'
import { createRecordsService, openRecordStore } from '@lr/records'
import { createWebhookService, openWebhookStore, webhookSettingsOf } from '@lr/webhooks'
import { mongoSkipReason, useMongoServer } from './harness/ferretdb'
import { commandOn } from './harness/mongo-wire'
import { startTcpProxy, type TcpProxy } from './harness/tcp-proxy'

const alice: Principal = { account_id: 'acct_a', key_id: 'key_a', scope: 'personal', team_id: null, role: 'owner' }
const batch = { qrcodes: ['a', 'b', 'c'].map((n) => ({ url: `https://example.com/${n}`, name: n })) }

/** A request's failure as its status and message (an AppError's status is its answer's). */
const failure = (error: { status?: number; message: string }) => ({ status: error.status, error: error.message })

const skip = mongoSkipReason()
if (skip) console.warn(`skipping the stalled writer on MongoDB: ${skip}`)
describe.skipIf(Boolean(skip))('Idempotency-Key on MongoDB without transactions: a write stalled or failed between its receipt and its records', () => {
  const url = useMongoServer()
  const cleanups: (() => Promise<unknown>)[] = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  /** A records and a webhooks service on their own connection to database `name`, through `proxy` when given. */
  async function replica(name: string, proxy?: TcpProxy) {
    const target = new URL(url())
    if (proxy) [target.hostname, target.port] = ['127.0.0.1', String(proxy.port)]
    const base = await connectMongo(target.href)
    const conn: Connection = base.useDb(name, { useCache: false })
    const config = loadConfig({ STORE: 'mongo', MONGODB_URL: target.href, WEBHOOKS_ALLOW_PRIVATE: '1' })
    const [records, webhooks] = [await openRecordStore(config, conn), await openWebhookStore(config, conn)]
    cleanups.push(() => base.close(), () => records.close(), () => webhooks.close())
    return {
      conn,
      records: createRecordsService({ store: records.store, now: () => Math.floor(Date.now() / 1000) }),
      webhooks: createWebhookService({ store: webhooks.store, settings: webhookSettingsOf(config), libraryOfCode: async () => null }),
    }
  }

  /** A reader on a database of its own and a writer whose requests go through a relay; null where transactions make it moot. */
  async function replicas() {
    const name = `lr_stall_${crypto.randomUUID().slice(0, 8)}`
    const proxy = await startTcpProxy(Number(new URL(url()).port))
    cleanups.push(() => proxy.stop())
    const reader = await replica(name)
    cleanups.push(() => reader.conn.dropDatabase())
    if (await supportsTransactions(reader.conn)) return null // receipt and write commit together there
    return { name, proxy, reader, writer: await replica(name, proxy) }
  }

  it('keeps the answer a retry gave for a stalled writer, and stores the batch once when it wakes', async () => {
    const stack = await replicas()
    if (!stack) return
    const { proxy, reader, writer } = stack

    const held = proxy.holdFrom(commandOn('static_records'))
    const first = writer.records.batch(alice, batch, 'stall-1').then((answer) => ({ answer }), failure)
    await held // its receipt is written; its records wait on the wire
    const retry = await reader.records.batch(alice, batch, 'stall-1') // after the grace: written by the retry
    expect(retry.created.map((r) => r.name)).toEqual(['a', 'b', 'c'])
    proxy.release()

    const answer = await first
    const stored = (await reader.records.list(alice, {})).qrcodes
    expect(stored.map((r) => r.qr_id).sort()).toEqual(retry.created.map((r) => r.qr_id).sort())
    expect(answer).toEqual({ answer: retry })
    expect(await reader.records.batch(alice, batch, 'stall-1')).toEqual(retry)
  }, 30_000)

  it('keeps the endpoint and secret a retry gave for a stalled webhook create, and stores it once when it wakes', async () => {
    const stack = await replicas()
    if (!stack) return
    const { proxy, reader, writer } = stack
    const body = { url: 'http://127.0.0.1:9/hook', events: ['record.created'] }
    const held = proxy.holdFrom(commandOn('webhook_endpoints'))
    const first = writer.webhooks.create(alice, body, 'stall-2').then((answer) => ({ answer }), failure)
    await held
    const retry = await reader.webhooks.create(alice, body, 'stall-2')
    proxy.release()

    const answer = await first
    expect(await reader.webhooks.create(alice, body, 'stall-2')).toEqual(retry)
    expect((await reader.webhooks.list(alice)).webhooks.map((w) => w.id)).toEqual([retry.id])
    expect(answer).toEqual({ answer: retry })
  }, 30_000)

  it('creates once for a twin that found the receipt taken by a request whose write then failed', async () => {
    const stack = await replicas()
    if (!stack) return
    const { proxy, writer: twin } = stack
    // The first request: its records held on the wire of a relay of its own.
    const firstProxy = await startTcpProxy(Number(new URL(url()).port))
    cleanups.push(() => firstProxy.stop())
    const writer = await replica(stack.name, firstProxy)
    // The twin: held at its receipt, after it looked for one and found none.
    const twinHeld = proxy.holdFrom(commandOn('receipts'))
    const twinAnswer = twin.records.batch(alice, batch, 'fail-1').then((answer) => ({ answer }), failure)
    await twinHeld
    const firstHeld = firstProxy.holdFrom(commandOn('static_records'))
    const firstAnswer = writer.records.batch(alice, batch, 'fail-1').then((answer) => ({ answer }), failure)
    await firstHeld // the first's receipt is written, its records wait
    proxy.release() // the twin's receipt clashes with it: the twin waits for the first's write
    await Bun.sleep(300)
    await firstProxy.cut() // which fails: the first takes its receipt back
    await firstProxy.reopen()
    expect(await firstAnswer).toMatchObject({ error: expect.any(String) })

    const answer = await twinAnswer
    if (!('answer' in answer)) throw new Error(`the twin failed: ${JSON.stringify(answer)}`)
    const ids = answer.answer.created.map((r) => r.qr_id)
    expect(answer.answer.created.map((r) => r.name)).toEqual(['a', 'b', 'c'])
    expect((await stack.reader.records.list(alice, {})).qrcodes.map((r) => r.qr_id).sort()).toEqual(ids.sort())
    expect(await writer.records.batch(alice, batch, 'fail-1')).toEqual(answer.answer)
  }, 30_000)
})
