import { afterAll, beforeAll, describe } from 'bun:test'
import { idempotencySuite, STATIC_CREATES } from './api/idempotency.suite'
import { staticSuite } from './api/static.suite'
import { DYNAMIC_CREATES, dynamicSuite } from './api/dynamic.suite'
import { shortLinksSuite } from './api/short-links.suite'
import { type MongoServer, mongoSkipReason, startFerretDb } from './harness/ferretdb'
import { skipReason } from './harness/servers'
import { type Stack, startNatsStack } from './harness/stack'

// The scale-out stack as deploy/k8s runs it (TRANSPORT=nats, STORE=mongo), every service on one
// MongoDB database: FerretDB here, or MONGODB_URL's server (README "MongoDB compatibility").
const skip = skipReason('nats-server') ?? mongoSkipReason()
if (skip) describe.skip(`API over NATS on MongoDB (${skip})`, () => {})
else {
  describe('API over NATS, separate processes, STORE=mongo', () => {
    let stack: Stack
    let ferret: MongoServer | undefined
    let url: string
    beforeAll(async () => {
      const external = Bun.env.MONGODB_URL
      if (!external) ferret = await startFerretDb()
      const base = new URL(external ?? ferret!.url)
      base.pathname = `/lr_stack_${crypto.randomUUID().slice(0, 8)}`
      url = base.toString()
      stack = await startNatsStack({ STORE: 'mongo', MONGODB_URL: url })
    }, 60_000)
    afterAll(async () => {
      await stack?.stop()
      await ferret?.stop()
    })

    staticSuite(() => stack, { largeExport: false })
    idempotencySuite(() => stack, [...STATIC_CREATES, ...DYNAMIC_CREATES])
    dynamicSuite(() => stack)
    shortLinksSuite(() => stack)
  })
}
