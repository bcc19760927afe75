// A writer that stalls (a paused VM, a stopped process, a slow network) between its receipt and
// its records, on a MongoDB without transactions (FerretDB): past PENDING_GRACE_MS a retry takes
// it for dead and writes its records. When the writer wakes it must not take the receipt back,
// nor write its batch a second time: both answers are the first, and the batch is stored once.
// Two records replicas as their processes open them, each on its own connection; the writer's
// goes through a TCP relay that holds its request for the records (docs/decisions.md §8).
import { afterEach, describe, expect, it } from 'bun:test'
import type { Connection } from 'mongoose'
import { loadConfig, type Principal } from '@lr/proto'
import { connectMongo } from '@lr/platform/mongo'
import { supportsTransactions } from '@lr/platform/mongo-insert'
import { createRecordsService, openRecordStore } from '@lr/records'
import { createWebhookService, openWebhookStore, webhookSettingsOf } from '@lr/webhooks'
import { mongoSkipReason, useMongoServer } from './harness/ferretdb'
import { startTcpProxy, type TcpProxy } from './harness/tcp-proxy'

const alice: Principal = { account_id: 'acct_a', key_id: 'key_a', scope: 'personal', team_id: null, role: 'owner' }
const batch = { qrcodes: ['a', 'b', 'c'].map((n) => ({ url: `https://example.com/${n}`, name: n })) }

/** The start of a Mongo `insert` command into `collection` as sent on the wire (BSON: string element "insert"). */
function insertCommandInto(collection: string): Uint8Array {
  const name = new TextEncoder().encode(`${collection}\0`)
  const length = new Uint8Array(new Int32Array([name.length]).buffer)
  return new Uint8Array([0x02, ...new TextEncoder().encode('insert\0'), ...length, ...name])
}

const skip = mongoSkipReason()
if (skip) console.warn(`skipping the stalled writer on MongoDB: ${skip}`)
describe.skipIf(Boolean(skip))('Idempotency-Key: a writer stalled between its receipt and its records (MongoDB without transactions)', () => {
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
    return { proxy, reader, writer: await replica(name, proxy) }
  }

  it('keeps the answer a retry gave for a stalled writer, and stores the batch once when it wakes', async () => {
    const stack = await replicas()
    if (!stack) return
    const { proxy, reader, writer } = stack

    const held = proxy.holdFrom(insertCommandInto('static_records'))
    const first = writer.records.batch(alice, batch, 'stall-1').then(
      (answer) => ({ answer }),
      (error: Error) => ({ error: error.message }),
    )
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
    const held = proxy.holdFrom(insertCommandInto('webhook_endpoints'))
    const first = writer.webhooks.create(alice, body, 'stall-2').then(
      (answer) => ({ answer }),
      (error: Error) => ({ error: error.message }),
    )
    await held
    const retry = await reader.webhooks.create(alice, body, 'stall-2')
    proxy.release()

    const answer = await first
    expect(await reader.webhooks.create(alice, body, 'stall-2')).toEqual(retry)
    expect((await reader.webhooks.list(alice)).webhooks.map((w) => w.id)).toEqual([retry.id])
    expect(answer).toEqual({ answer: retry })
  }, 30_000)
})
