import { afterAll, beforeAll, describe } from 'bun:test'
import { accessSuite } from './api/access.suite'
import { idempotencySuite, STATIC_CREATES } from './api/idempotency.suite'
import { staticSuite } from './api/static.suite'
import { DYNAMIC_CREATES, dynamicSuite } from './api/dynamic.suite'
import { shortLinksSuite } from './api/short-links.suite'
import { reviewSuite } from './api/review.suite'
import { syncSuite } from './api/sync.suite'
import { tagsSuite } from './api/tags.suite'
import { resolverReplicasSuite } from './api/resolver-replicas.suite'
import { ANALYTICS_ENV, analyticsSuite } from './api/analytics.suite'
import { LIMITS_ENV, limitsSuite } from './api/limits.suite'
import { WEBHOOKS_ENV, webhooksSuite } from './api/webhooks.suite'
import { startScaleOutStack, type ScaleOutStack } from './harness/scale-out'
import { mongoForTests } from './harness/mongo'

// The API suite a third time, in the production shape: TRANSPORT=nats STORE=mongo LIMITER=redis
// with two replicas of every process; requests alternate between the two gateways.
const server = await mongoForTests()
if ('skip' in server) describe.skip(`API scaled out (${server.skip})`, () => {})
else {
  const mongo = server.url
  afterAll(() => server.stop())
  describe('API scaled out: two replicas of everything on NATS, MongoDB and Redis', () => {
    let stack: ScaleOutStack
    beforeAll(async () => {
      stack = await startScaleOutStack(mongo)
    }, 120_000)
    afterAll(() => stack?.stop(), 60_000)

    accessSuite(() => stack, () => startScaleOutStack(mongo, { KEY_ACTIVATION_DELAY_S: '3600' }))
    staticSuite(() => stack)
    idempotencySuite(() => stack, [...STATIC_CREATES, ...DYNAMIC_CREATES])
    dynamicSuite(() => stack)
    syncSuite(() => stack)
    tagsSuite(() => stack)
    shortLinksSuite(() => stack)
    reviewSuite(() => stack)
    resolverReplicasSuite(() => stack)
  })

  // Webhooks share this stack (their settings touch nothing analytics reads): two workers on Mongo.
  describe('API scaled out, behind a trusted proxy', () => {
    let stack: ScaleOutStack
    beforeAll(async () => {
      stack = await startScaleOutStack(mongo, { ...ANALYTICS_ENV, ...WEBHOOKS_ENV })
    }, 120_000)
    afterAll(() => stack?.stop(), 60_000)

    analyticsSuite(() => stack)
    webhooksSuite(() => stack)
  })

  describe('API scaled out with small limits shared through Redis', () => {
    let stack: ScaleOutStack
    beforeAll(async () => {
      stack = await startScaleOutStack(mongo, LIMITS_ENV)
    }, 120_000)
    afterAll(() => stack?.stop(), 60_000)

    limitsSuite(() => stack)
  })
}
