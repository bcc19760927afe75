import { afterEach, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import type Redis from 'ioredis'
import { type RedisServer, startRedis } from '../../../test/harness/redis'
import { skipReason } from '../../../test/harness/servers'
import { createFailoverLimiter, createMemoryLimiter, createRedisLimiter } from '../../src/limiter'
import { createRedisClient } from '../../src/limiter/redis-client'
import { connected } from './redis-ready'

const skip = skipReason('redis-server')
const POLICY = { daily: 100, perSecond: 10, burst: 10 }
// Characters a URL must percent-encode: REDIS_URL carries them encoded (deploy/README.md).
const PASSWORD = 'p@ss:w/rd%1'

describe.skipIf(Boolean(skip))(`REDIS_URL with a password, on a real redis-server${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: RedisServer | undefined
  const clients: Redis[] = []
  afterEach(async () => {
    for (const redis of clients.splice(0)) redis.disconnect()
    await server?.stop()
  })
  const client = (url: string) => {
    const redis = createRedisClient(url)
    clients.push(redis)
    return redis
  }

  it('authenticates with the password the URL carries and keeps the shared count in Redis', async () => {
    server = await startRedis({ password: PASSWORD })
    expect(server.url).toBe(`redis://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${server.port}`)
    const redis = await connected(client(server.url))
    const decision = await createRedisLimiter(redis, { prefix: 'auth:' }).consume('key-1', POLICY)
    expect(decision).toMatchObject({ allowed: true, burst: { remaining: 9 } })
    expect(Object.keys(await redis.hgetall('auth:key-1')).length).toBeGreaterThan(0)
  })

  it('authenticates an ACL user (redis://user:password@…) whose keys are only the limiter\'s', async () => {
    const started = await startRedis({ password: PASSWORD, user: { name: 'limiter', password: PASSWORD, keys: 'lr:limit:*' } })
    server = started
    const redis = await connected(client(started.userUrl!))
    expect(await redis.call('ACL', 'WHOAMI')).toBe('limiter')
    expect((await createRedisLimiter(redis).consume('key-4', POLICY)).allowed).toBe(true)
    expect(Object.keys(await redis.hgetall('lr:limit:key-4')).length).toBeGreaterThan(0)
    // The pattern holds: the limiter's own prefix is all this user may touch.
    await expect(redis.set('elsewhere', '1')).rejects.toThrow('NOPERM')
  })

  it('serves an ACL user with exactly the rules README "Configuration" (REDIS_URL) gives it, and notices Redis back by PING', async () => {
    const readme = await Bun.file(join(import.meta.dir, '../../../README.md')).text()
    const rule = /`ACL SETUSER limiter on >password ~(\S+) ([^`]+)`/.exec(readme)
    if (!rule) throw new Error('README "Configuration" gives no `ACL SETUSER limiter ...` line for REDIS_URL')
    const started = await startRedis({ password: PASSWORD, user: { name: 'limiter', password: PASSWORD, keys: rule[1]!, commands: rule[2]!.split(' ') } })
    server = started
    const logs: string[] = []
    const limiter = createFailoverLimiter(createRedisLimiter(await connected(client(started.userUrl!))), createMemoryLimiter(), { probeIntervalMs: 50, log: (line) => logs.push(line) })
    expect((await limiter.consume('key-7', POLICY)).allowed).toBe(true)
    expect([limiter.degraded(), logs]).toEqual([false, []])
    // An outage, then Redis back: the limiter's PING notices it without a request.
    await started.stop()
    await limiter.consume('key-7', POLICY)
    expect(limiter.degraded()).toBe(true)
    await started.restart()
    for (let i = 0; i < 100 && limiter.degraded(); i++) await Bun.sleep(50)
    expect(limiter.degraded()).toBe(false)
    expect((await limiter.consume('key-7', POLICY)).allowed).toBe(true)
    expect(logs).toHaveLength(2)
    expect(logs[1]).toBe('rate limiter: Redis is back; limits are shared again')
    await limiter.close()
  })

  it('with a wrong password, limits per process and says why in one line (the server\'s WRONGPASS)', async () => {
    server = await startRedis({ password: PASSWORD })
    const wrong = client(`redis://:wrong@127.0.0.1:${server.port}`)
    const logs: string[] = []
    const limiter = createFailoverLimiter(createRedisLimiter(wrong), createMemoryLimiter(), { log: (line) => logs.push(line) })
    await Bun.sleep(200)
    expect((await limiter.consume('key-2', POLICY)).allowed).toBe(true)
    expect(limiter.degraded()).toBe(true)
    expect(await limiter.ping()).toBe(false)
    expect(logs).toEqual(['rate limiter: Redis unreachable (WRONGPASS invalid username-password pair or user is disabled.); limiting per process until it returns'])
    await limiter.close()
  })
  it('says so in a second line when Redis comes back from an outage refusing the password, and no more', async () => {
    server = await startRedis()
    const logs: string[] = []
    const limiter = createFailoverLimiter(createRedisLimiter(await connected(client(server.url))), createMemoryLimiter(), { probeIntervalMs: 50, log: (line) => logs.push(line) })
    expect((await limiter.consume('key-5', POLICY)).allowed).toBe(true)
    await server.stop()
    await limiter.consume('key-5', POLICY)
    expect(logs).toHaveLength(1)
    // Restarted with a password this gateway lacks: the outage's line (ECONNREFUSED...) was all an
    // operator had read, while Redis was up and refusing the gateway (NOAUTH).
    await server.restart({ password: PASSWORD })
    for (let i = 0; i < 40; i++, await Bun.sleep(60)) await limiter.consume('key-5', POLICY)
    expect(logs).toHaveLength(2)
    expect(logs[1]).toStartWith('rate limiter: Redis unreachable (NOAUTH ')
    expect(limiter.degraded()).toBe(true)
    await limiter.close()
  })

  it('logs once, not once a second, when the ACL user may PING but not run the script (NOPERM)', async () => {
    const started = await startRedis({ password: PASSWORD, user: { name: 'limiter', password: PASSWORD, keys: 'lr:limit:*', commands: ['+@all', '-@scripting'] } })
    server = started
    const logs: string[] = []
    const limiter = createFailoverLimiter(createRedisLimiter(await connected(client(started.userUrl!))), createMemoryLimiter(), { probeIntervalMs: 50, log: (line) => logs.push(line) })
    // Two seconds at the policy's own rate (10 a second), so the per-process fallback never runs dry.
    for (let i = 0; i < 20; i++, await Bun.sleep(100)) expect((await limiter.consume('key-6', POLICY)).allowed).toBe(true)
    expect(await limiter.ping()).toBe(true)
    expect(limiter.degraded()).toBe(true)
    expect(logs).toHaveLength(1)
    expect(logs[0]).toStartWith("rate limiter: Redis refuses the limiter's script (NOPERM ")
    await limiter.close()
  })

  it('names the refused connection when Redis is down, not only that a command could not be written', async () => {
    server = await startRedis()
    const url = server.url
    await server.stop()
    const logs: string[] = []
    const limiter = createFailoverLimiter(createRedisLimiter(client(url)), createMemoryLimiter(), { log: (line) => logs.push(line) })
    await Bun.sleep(200)
    expect((await limiter.consume('key-3', POLICY)).allowed).toBe(true)
    expect(logs).toHaveLength(1)
    expect(logs[0]).toContain('ECONNREFUSED')
    await limiter.close()
  })
})
