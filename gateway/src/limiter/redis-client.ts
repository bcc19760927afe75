import Redis, { type RedisOptions } from 'ioredis'

/**
 * An ioredis client for the hot path: a command never waits for a dead Redis. Without a
 * connection it fails at once (no offline queue, no retries); meanwhile the client keeps
 * reconnecting in the background, so the shared limiter comes back by itself. How long a request
 * waits on a hung Redis is the failover limiter's bound (100 ms), not a command timeout here:
 * ioredis's timer fires in the same turn of the event loop as the reply it waits for is read, so
 * a gateway whose loop stalled past 100 ms (CPU-starved, a long GC) took a Redis that had
 * answered at once for a dead one. A connection that hears nothing for 5 s while commands wait
 * is dropped and made again (socketTimeout): the commands a hung Redis never answers do not pile up.
 */
export function createRedisClient(url: string, overrides: RedisOptions = {}): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    socketTimeout: 5_000,
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
