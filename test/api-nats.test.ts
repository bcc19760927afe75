import { afterAll, beforeAll, describe } from 'bun:test'
import { accessSuite } from './api/access.suite'
import { idempotencySuite, STATIC_CREATES } from './api/idempotency.suite'
import { LIMITS_ENV, limitsSuite, sharedLimitsSuite } from './api/limits.suite'
import { staticSuite } from './api/static.suite'
import { largeRowsSuite } from './api/large-rows.suite'
import { bodyFieldsSuite } from './api/body-fields.suite'
import { urlRulesSuite } from './api/url-rules.suite'
import { DYNAMIC_CREATES, dynamicSuite } from './api/dynamic.suite'
import { shortLinksSuite } from './api/short-links.suite'
import { reviewSuite } from './api/review.suite'
import { syncSuite } from './api/sync.suite'
import { tagsSuite } from './api/tags.suite'
import { docsSuite } from './api/docs.suite'
import { resolverReplicasSuite } from './api/resolver-replicas.suite'
import { ANALYTICS_ENV, analyticsSuite } from './api/analytics.suite'
import { CORS_ORIGIN, httpSuite } from './api/http.suite'
import { expiryReplicasSuite, expirySuite } from './api/expiry.suite'
import { WEBHOOKS_ENV, webhooksSuite } from './api/webhooks.suite'
import { webhookDestinationSuite } from './api/webhook-destinations.suite'
import { type RedisServer, startRedis } from './harness/redis'
import { skipReason } from './harness/servers'
import { spawnExtraGateway, type Stack, startNatsStack } from './harness/stack'

// The same API suite against separate processes over a real nats-server (TRANSPORT=nats).
const skip = skipReason('nats-server') ?? skipReason('redis-server')
if (skip) describe.skip(`API over NATS (${skip})`, () => {})
else {
  describe('API over NATS, separate processes', () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startNatsStack()
    }, 60_000)
    afterAll(() => stack?.stop())

    accessSuite(() => stack, () => startNatsStack({ KEY_ACTIVATION_DELAY_S: '3600' }))
    staticSuite(() => stack)
    largeRowsSuite(() => stack)
    bodyFieldsSuite(() => stack)
    urlRulesSuite(() => stack)
    idempotencySuite(() => stack, [...STATIC_CREATES, ...DYNAMIC_CREATES])
    dynamicSuite(() => stack)
    syncSuite(() => stack)
    tagsSuite(() => stack)
    shortLinksSuite(() => stack)
    reviewSuite(() => stack)
    docsSuite(() => stack)
    resolverReplicasSuite(() => stack)
    expirySuite(() => stack)
    expiryReplicasSuite(() => stack)
    webhookDestinationSuite(() => stack)
    // The CORS gateway is a second gateway process of this deployment: keys made here work there.
    httpSuite(() => stack, async () => {
      const gateway = await spawnExtraGateway(stack, { CORS_ORIGINS: CORS_ORIGIN })
      return { ...stack, request: gateway.request, stop: gateway.stop }
    })
  })

  describe('API over NATS, separate processes, behind a trusted proxy', () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startNatsStack(ANALYTICS_ENV)
    }, 60_000)
    afterAll(() => stack?.stop())

    analyticsSuite(() => stack)
  })

  describe('API over NATS, separate processes, with webhooks to 127.0.0.1 and fast retries', () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startNatsStack(WEBHOOKS_ENV)
    }, 60_000)
    afterAll(() => stack?.stop())

    webhooksSuite(() => stack, { crash: true })
  })

  describe('API over NATS with LIMITER=redis and small limits', () => {
    let stack: Stack
    let redis: RedisServer
    beforeAll(async () => {
      redis = await startRedis()
      stack = await startNatsStack({ ...LIMITS_ENV, LIMITER: 'redis', REDIS_URL: redis.url })
    }, 60_000)
    afterAll(async () => {
      await stack?.stop()
      await redis?.stop()
    })

    limitsSuite(() => stack)
    sharedLimitsSuite(() => stack, { secondGateway: () => spawnExtraGateway(stack), redis: () => redis })
  })
}
