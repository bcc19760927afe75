// One Idempotency-Key answers for one request across services (docs/decisions.md §8): records and
// dynamic opened as their start.ts opens them, each on its own store connection, on every driver.
import { afterEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Connection } from 'mongoose'
import { type Config, loadConfig, type Principal } from '@lr/proto'
import { connectMongo } from '@lr/platform/mongo'
import { openKeyClaims } from '@lr/platform/key-claims'
import { createRecordsService, openRecordStore } from '@lr/records'
import { createDynamicService, openDynamicStore } from '@lr/dynamic'
import { mongoSkipReason, useMongoServer } from './harness/ferretdb'

const alice: Principal = { account_id: 'acct_a', key_id: 'key_a', scope: 'personal', team_id: null, role: 'owner' }
const bob: Principal = { ...alice, account_id: 'acct_b', key_id: 'key_b' }
const staticBody = { url: 'https://example.com/s', name: 'S' }
const dynamicBody = { destination_url: 'https://example.com/d', name: 'D' }
const conflict = { status: 422, message: 'this Idempotency-Key was already used with a different request' }

/** Both services as their processes build them; on Mongo each on its own connection, as separate processes are. */
async function openServices(config: Config, conns: Connection[] = [], cleanup = async () => {}) {
  const [recordsConn, dynamicConn] = conns
  const [recordStore, dynamicStore] = [await openRecordStore(config, recordsConn), await openDynamicStore(config, dynamicConn)]
  const [recordKeys, dynamicKeys] = [openKeyClaims(config), openKeyClaims(config)]
  const now = () => 1_800_000_000
  return {
    records: createRecordsService({ store: recordStore.store, now, claims: recordKeys.claims }),
    dynamic: createDynamicService({ store: dynamicStore.store, now, shortBaseUrl: 'https://qr.example', claims: dynamicKeys.claims }),
    async close() {
      recordKeys.close()
      dynamicKeys.close()
      await recordStore.close()
      await dynamicStore.close()
      await cleanup()
    },
  }
}
type Services = Awaited<ReturnType<typeof openServices>>

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: { status: number; message: string }) => ({ status: error.status, message: error.message }),
  )

function crossServiceCases(open: () => Promise<Services>) {
  let services: Services
  afterEach(async () => {
    await services?.close()
  })

  it('answers 422 when a key of a static create comes back on a dynamic one, and creates no code', async () => {
    services = await open()
    const first = await services.records.create(alice, staticBody, 'idem-1')
    expect(await failure(services.dynamic.create(alice, dynamicBody, 'idem-1'))).toEqual(conflict)
    expect(await failure(services.dynamic.batch(alice, [dynamicBody], 'idem-1'))).toEqual(conflict)
    expect((await services.dynamic.list(alice, {})).dynqrcodes).toEqual([])
    expect(await services.records.create(alice, staticBody, 'idem-1')).toEqual(first)
  })

  it('answers 422 the other way round too', async () => {
    services = await open()
    await services.dynamic.batch(alice, [dynamicBody, dynamicBody], 'idem-2')
    expect(await failure(services.records.batch(alice, { qrcodes: [staticBody] }, 'idem-2'))).toEqual(conflict)
    expect((await services.records.list(alice, {})).qrcodes).toEqual([])
  })

  it('lets one of two services racing with one key create, and answers the other 422', async () => {
    services = await open()
    const answers = await Promise.all([failure(services.records.create(alice, staticBody, 'idem-3')), failure(services.dynamic.create(alice, dynamicBody, 'idem-3'))])
    expect(answers.filter((a) => a === null)).toHaveLength(1)
    expect(answers.filter((a) => a !== null)).toEqual([conflict])
    const held = (await services.records.list(alice, {})).qrcodes.length + (await services.dynamic.list(alice, {})).dynqrcodes.length
    expect(held).toBe(1)
  })

  it('keeps keys per API key across services', async () => {
    services = await open()
    await services.records.create(alice, staticBody, 'idem-4')
    expect((await services.dynamic.create(bob, dynamicBody, 'idem-4')).created).toHaveLength(1)
  })

  it('does not hold a key for a request refused by validation', async () => {
    services = await open()
    expect((await failure(services.records.create(alice, { url: 'nope', name: 'x' }, 'idem-5')))?.status).toBe(400)
    expect((await services.dynamic.create(alice, dynamicBody, 'idem-5')).created).toHaveLength(1)
  })
}

describe('Idempotency-Key across services, SQLite (one file per service)', () => {
  let dir: string
  afterEach(() => rmSync(dir, { recursive: true, force: true }))
  crossServiceCases(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lr-idem-'))
    return openServices(loadConfig({ DATA_DIR: dir, STORE: 'sqlite' }))
  })
})

const skip = mongoSkipReason()
if (skip) console.warn(`skipping Idempotency-Key across services on MongoDB: ${skip}`)
describe.skipIf(Boolean(skip))('Idempotency-Key across services, MongoDB (one database)', () => {
  const url = useMongoServer()
  crossServiceCases(async () => {
    const name = `lr_idem_${crypto.randomUUID().slice(0, 8)}`
    const bases = [await connectMongo(url()), await connectMongo(url())]
    const conns = bases.map((base) => base.useDb(name, { useCache: false }))
    return openServices(loadConfig({ STORE: 'mongo', MONGODB_URL: url() }), conns, async () => {
      await conns[0]!.dropDatabase()
      await Promise.all(bases.map((base) => base.close()))
    })
  })
})
