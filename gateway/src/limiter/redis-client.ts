import Redis, { type RedisOptions } from 'ioredis'

/**
 * An ioredis client for the hot path: a command never waits for a dead Redis. Without a
 * connection it fails at once (no offline queue, no retries); on a hung one it times out after
 * 100 ms; meanwhile the client keeps reconnecting in the background, so the shared limiter
 * comes back by itself.
 */
export function createRedisClient(url: string, overrides: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    commandTimeout: 100,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times) => Math.min(50 * times, 1_000),
    ...overrides,
  })
  // Connection errors surface as rejected commands (the failover limiter logs them once);
  // without a listener ioredis would print every reconnect attempt.
  redis.on('error', () => {})
  return redis
}
