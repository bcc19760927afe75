import { createHash } from 'node:crypto'
import type Redis from 'ioredis'
import { intervalUs, toDecision } from './gcra'
import type { RateLimiter } from './port'
import { LIMIT_SCRIPT } from './redis-script'

export interface RedisLimiterOptions {
  /** Prefix of every key this limiter writes. */
  prefix?: string
  /** Clock in epoch ms that replaces Redis server time; for tests only (midnight, refill). */
  now?: () => number
}

const SHA = createHash('sha1').update(LIMIT_SCRIPT).digest('hex')
const LIMITED_BY = [undefined, 'rate', 'daily'] as const

const connections = new WeakMap<Redis, { error?: string }>()
/**
 * Why a client has no connection, for the failover's one line: without one a command only fails
 * with "Stream isn't writeable" (no offline queue), while the connection's own error says why
 * (refused, a wrong password: WRONGPASS, a timeout). One pair of listeners per client, however
 * many limiters share it.
 */
function watched(redis: Redis): { error?: string } {
  let connection = connections.get(redis)
  if (!connection) {
    const state: { error?: string } = {}
    redis.on('error', (error: Error) => void (state.error = error.message))
    redis.on('ready', () => void (state.error = undefined))
    connections.set(redis, (connection = state))
  }
  return connection
}

/**
 * The shared limiter: one Lua script per request on Redis server time, so any number of
 * gateways spend one budget. It owns `redis`: close() disconnects it.
 */
export function createRedisLimiter(redis: Redis, options: RedisLimiterOptions = {}): RateLimiter {
  const prefix = options.prefix ?? 'lr:limit:'
  const connection = watched(redis)

  /** EVALSHA, and EVAL once when the server does not know the script (first call, after a restart). */
  async function run(key: string, args: (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(SHA, 1, key, ...args)
    } catch (error) {
      if (redis.status !== 'ready') throw new Error(connection.error ?? `not connected (${redis.status})`, { cause: error })
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error
      return await redis.eval(LIMIT_SCRIPT, 1, key, ...args)
    }
  }

  return {
    async consume(key, policy) {
      const nowArg = options.now ? String(Math.floor(options.now() * 1000)) : ''
      const args = [policy.daily, intervalUs(policy), policy.burst, nowArg]
      const [code, tatUs, count, nowUs] = (await run(prefix + key, args)) as [number, string, number, string]
      return toDecision({ limitedBy: LIMITED_BY[code], tatUs: Number(tatUs), count: Number(count) }, Number(nowUs), policy)
    },
    async ping() {
      try {
        return (await redis.ping()) === 'PONG'
      } catch {
        return false
      }
    },
    async close() {
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect())
      else redis.disconnect()
    },
  }
}
