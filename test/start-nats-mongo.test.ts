import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { type MongoServer, mongoSkipReason, startFerretDb } from './harness/ferretdb'
import { type NatsServer, startNats } from './harness/nats'
import { freePort, waitUntil } from './harness/ports'
import { type RedisServer, startRedis } from './harness/redis'
import { skipReason } from './harness/servers'

// `bun run start:nats` with the scale-out settings of README "The scale-out stack on one
// machine": every process over NATS, on MongoDB (FerretDB here) and the Redis limiter.
const ROOT = join(import.meta.dir, '..')
const skip = skipReason('nats-server') ?? skipReason('redis-server') ?? mongoSkipReason()
if (skip) describe.skip(`bun run start:nats with STORE=mongo (${skip})`, () => {})
else
  describe('bun run start:nats with STORE=mongo', () => {
    let nats: NatsServer
    let redis: RedisServer
    let mongo: MongoServer
    let proc: Subprocess
    let api: string
    let short: string
    const dataDir = mkdtempSync(join(tmpdir(), 'lr-start-nats-'))
    beforeAll(async () => {
      ;[nats, redis, mongo] = await Promise.all([startNats({ jetstream: true }), startRedis(), startFerretDb()])
      const [port, shortPort] = [await freePort(), await freePort()]
      api = `http://127.0.0.1:${port}`
      short = `http://127.0.0.1:${shortPort}`
      const env = {
        ...Bun.env, TRANSPORT: 'nats', NATS_URL: nats.url, LIMITER: 'redis', REDIS_URL: redis.url, STORE: 'mongo',
        MONGODB_URL: `${mongo.url}library_records`, PORT: String(port), SHORT_PORT: String(shortPort), DATA_DIR: dataDir,
      }
      proc = Bun.spawn(['bun', 'run', 'start:nats'], { cwd: ROOT, env, stdout: 'ignore', stderr: 'ignore' })
    }, 60_000)
    afterAll(async () => {
      proc?.kill('SIGTERM')
      await proc?.exited
      await Promise.all([nats?.stop(), redis?.stop(), mongo?.stop()])
      rmSync(dataDir, { recursive: true, force: true })
    }, 60_000)

    it('serves the API ready on MongoDB and the resolver, and stops on SIGTERM', async () => {
      await waitUntil(async () => (await fetch(`${api}/readyz`)).status === 200, 30_000, 'the gateway to be ready')
      expect(await (await fetch(`${api}/readyz`)).json()).toMatchObject({ status: 'ready', checks: { nats: true } })
      await waitUntil(async () => (await fetch(`${short}/NoSuchCode1`)).status === 404, 30_000, 'the resolver')
      // 403 once the auth service answers from MongoDB (no such key); 503 while it still starts.
      const list = () => fetch(`${api}/v1/qrcodes`, { headers: { 'x-api-key': 'lrp_00000000000000000000000000000000' } })
      await waitUntil(async () => (await list()).status !== 503, 30_000, 'the auth service')
      expect((await list()).status).toBe(403)
    }, 60_000)
  })
