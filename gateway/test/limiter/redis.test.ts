import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import type Redis from 'ioredis'
import { type RedisServer, startRedis } from '../../../test/harness/redis'
import { skipReason } from '../../../test/harness/servers'
import { createRedisLimiter } from '../../src/limiter'
import { createRedisClient } from '../../src/limiter/redis-client'
import { limiterContract, NOON } from './limiter.contract'
import { connected } from './redis-ready'

const skip = skipReason('redis-server')

describe.skipIf(Boolean(skip))(`redis limiter${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let server: RedisServer
  let client: Redis
  const clients: Redis[] = []
  const newClient = async () => {
    const redis = await connected(createRedisClient(server.url))
    clients.push(redis)
    return redis
  }

  beforeAll(async () => {
    server = await startRedis()
    client = await newClient()
  })
  afterAll(async () => {
    for (const redis of clients) redis.disconnect()
    await server?.stop()
  })

  limiterContract((now) => createRedisLimiter(client, { now }))

  it('admits exactly burst requests in total when two gateways flood it at once', async () => {
    const gateways = [createRedisLimiter(await newClient()), createRedisLimiter(await newClient())]
    const policy = { daily: 1000, perSecond: 1, burst: 20 }
    const key = `flood-${crypto.randomUUID()}`
    const decisions = await Promise.all(Array.from({ length: 60 }, (_, i) => gateways[i % 2]!.consume(key, policy)))
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20)
    expect(decisions.filter((d) => d.limitedBy === 'rate')).toHaveLength(40)
  })

  it('shares one daily quota exactly between two gateways', async () => {
    const gateways = [createRedisLimiter(await newClient()), createRedisLimiter(await newClient())]
    const policy = { daily: 15, perSecond: 1000, burst: 1000 }
    const key = `quota-${crypto.randomUUID()}`
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => gateways[i % 2]!.consume(key, policy)))
    expect(decisions.filter((d) => d.allowed)).toHaveLength(15)
    expect(decisions.filter((d) => d.limitedBy === 'daily')).toHaveLength(25)
  })

  it('uses Redis server time when no clock is injected', async () => {
    const decision = await createRedisLimiter(client).consume(`time-${crypto.randomUUID()}`, { daily: 5, perSecond: 1, burst: 1 })
    const nextMidnightS = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400
    expect(decision.daily.resetAt).toBe(nextMidnightS)
  })

  it('expires a key just after the next 00:00 UTC so Redis does not grow unbounded', async () => {
    const key = crypto.randomUUID()
    await createRedisLimiter(client, { prefix: 'ttl:', now: () => NOON }).consume(key, { daily: 5, perSecond: 1, burst: 5 })
    const pttl = await client.pttl(`ttl:${key}`)
    expect(pttl).toBeGreaterThan(43_200_000)
    expect(pttl).toBeLessThanOrEqual(43_201_000)
  })

  it('writes nothing to Redis for a refused request', async () => {
    const limiter = createRedisLimiter(client, { prefix: 'refused:', now: () => NOON })
    const policy = { daily: 1, perSecond: 1, burst: 5 }
    const key = crypto.randomUUID()
    await limiter.consume(key, policy)
    const before = await client.hgetall(`refused:${key}`)
    expect((await limiter.consume(key, policy)).limitedBy).toBe('daily')
    expect(await client.hgetall(`refused:${key}`)).toEqual(before)
  })

  it('loads the script again when Redis has forgotten it', async () => {
    const limiter = createRedisLimiter(client)
    await limiter.consume(`flush-${crypto.randomUUID()}`, { daily: 5, perSecond: 1, burst: 5 })
    await client.script('FLUSH')
    expect((await limiter.consume(`flush-${crypto.randomUUID()}`, { daily: 5, perSecond: 1, burst: 5 })).allowed).toBe(true)
  })

  it('answers ping with true while Redis is up', async () => {
    expect(await createRedisLimiter(client).ping()).toBe(true)
  })
})
