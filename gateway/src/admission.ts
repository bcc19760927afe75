import { AppError, type Config, libraryOf, type Principal } from '@lr/proto'
import {
  createFailoverLimiter, createMemoryLimiter, createRedisLimiter, type LimitPolicy, limitMessage,
  rateLimitHeaders, type RateLimiter,
} from './limiter'
import { rateLimited, watchRateLimiter } from '@lr/platform/metrics'
import type { Admit } from './plugins/api-key-auth'
import type { ReadinessChecks } from './routes/health'

export interface Admission {
  admit: Admit
  /** What /readyz reports without failing on it: Redis, when LIMITER=redis. */
  optional: ReadinessChecks
  close(): Promise<void>
}

/** The limits of docs/decisions.md §1 and §8, set by the LIMIT_* settings. */
export const policiesOf = (config: Config): Record<Principal['scope'], LimitPolicy> => ({
  personal: { daily: config.LIMIT_PERSONAL_DAILY, perSecond: config.LIMIT_PERSONAL_PER_SECOND, burst: config.LIMIT_PERSONAL_BURST },
  business: { daily: config.LIMIT_BUSINESS_DAILY, perSecond: config.LIMIT_BUSINESS_PER_SECOND, burst: config.LIMIT_BUSINESS_BURST },
})

/**
 * Whose budget a request spends: the account's in the library its key acts on. Not the key's: an
 * account holds one key per scope at a time (spec §8), so revoking a key and making a new one
 * (self-service) must not start a fresh day's quota or a full burst.
 */
export const budgetOf = (principal: Principal) => `${principal.account_id}@${libraryOf(principal)}`

/** Admission of verified requests through one limiter: headers when allowed, a 429 when not. */
export function admitWith(limiter: RateLimiter, policies: Record<Principal['scope'], LimitPolicy>): Admit {
  return async (principal) => {
    const policy = policies[principal.scope]
    const decision = await limiter.consume(budgetOf(principal), policy)
    const headers = rateLimitHeaders(decision, policy)
    if (!decision.allowed) {
      rateLimited.inc({ reason: decision.limitedBy === 'daily' ? 'daily' : 'per_second' })
      throw new AppError('rate_limited', limitMessage(decision, policy), { retryAfter: decision.retryAfterS, headers })
    }
    return headers
  }
}

/**
 * LIMITER=memory: per-process limits. LIMITER=redis: one budget shared by every gateway, with the
 * in-process limiter standing in while Redis is unreachable. Redis is optional for readiness
 * (docs/decisions.md §8): a Redis outage must not take every gateway out of service at once.
 */
export async function createAdmission(config: Config): Promise<Admission> {
  const policies = policiesOf(config)
  if (config.LIMITER === 'memory') {
    const limiter = createMemoryLimiter()
    return { admit: admitWith(limiter, policies), optional: {}, close: () => limiter.close() }
  }
  // Loaded here, not at the top: a gateway on LIMITER=memory (and `bun start`) never loads ioredis.
  const { createRedisClient } = await import('./limiter/redis-client')
  const limiter = createFailoverLimiter(createRedisLimiter(createRedisClient(config.REDIS_URL)), createMemoryLimiter())
  watchRateLimiter(() => limiter.degraded())
  return {
    admit: admitWith(limiter, policies),
    optional: { redis: async () => !limiter.degraded() && (await limiter.ping()) },
    close: () => limiter.close(),
  }
}
