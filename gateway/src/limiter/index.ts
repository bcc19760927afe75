export type { LimitDecision, LimitPolicy, RateLimiter } from './port'
export { createMemoryLimiter, type MemoryLimiter, type MemoryLimiterOptions } from './rate-limiter.memory'
export { createRedisLimiter, type RedisLimiterOptions } from './rate-limiter.redis'
export { createFailoverLimiter, type FailoverLimiter, type FailoverOptions } from './rate-limiter.failover'
// createRedisClient is imported from './redis-client' itself: ioredis (~7 MB of a process's memory) loads only with LIMITER=redis.
export { limitMessage, rateLimitHeaders } from './headers'
