import type Redis from 'ioredis'

/** Waits until a client without an offline queue can take commands. */
export async function connected(redis: Redis, timeoutMs = 5_000): Promise<Redis> {
  const deadline = Date.now() + timeoutMs
  while (redis.status !== 'ready') {
    if (Date.now() > deadline) throw new Error(`Redis client not ready after ${timeoutMs} ms (status ${redis.status})`)
    await Bun.sleep(10)
  }
  return redis
}
