import { afterAll, beforeAll, describe } from 'bun:test'
import { accessSuite } from './api/access.suite'
import { idempotencySuite, STATIC_CREATES } from './api/idempotency.suite'
import { LIMITS_ENV, limitsSuite } from './api/limits.suite'
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
import { ANALYTICS_ENV, analyticsSuite } from './api/analytics.suite'
import { CORS_ORIGIN, httpSuite } from './api/http.suite'
import { expirySuite } from './api/expiry.suite'
import { WEBHOOKS_ENV, webhooksSuite } from './api/webhooks.suite'
import { webhookDestinationSuite } from './api/webhook-destinations.suite'
import { type Stack, startInProcessStack } from './harness/stack'

// The API suite against the whole product in one process (TRANSPORT=memory, SQLite).
describe('API, one process', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startInProcessStack()
  })
  afterAll(() => stack?.stop())

  accessSuite(() => stack, () => startInProcessStack({ KEY_ACTIVATION_DELAY_S: '3600' }))
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
  expirySuite(() => stack)
  httpSuite(() => stack, () => startInProcessStack({ CORS_ORIGINS: CORS_ORIGIN }))
  webhookDestinationSuite(() => stack)
})

describe('API, one process, with webhooks to 127.0.0.1 and fast retries', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startInProcessStack(WEBHOOKS_ENV)
  })
  afterAll(() => stack?.stop())

  webhooksSuite(() => stack, { metrics: true })
})

describe('API, one process, with small limits', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startInProcessStack(LIMITS_ENV)
  })
  afterAll(() => stack?.stop())

  limitsSuite(() => stack)
})

describe('API, one process, behind a trusted proxy', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startInProcessStack(ANALYTICS_ENV)
  })
  afterAll(() => stack?.stop())

  analyticsSuite(() => stack)
})
