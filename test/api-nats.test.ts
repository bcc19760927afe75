import { afterAll, beforeAll, describe } from 'bun:test'
import { accessSuite } from './api/access.suite'
import { staticSuite } from './api/static.suite'
import { skipReason } from './harness/servers'
import { type Stack, startNatsStack } from './harness/stack'

// The same API suite against separate processes over a real nats-server (TRANSPORT=nats).
const skip = skipReason('nats-server')
if (skip) describe.skip(`API over NATS (${skip})`, () => {})
else
  describe('API over NATS, separate processes', () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startNatsStack()
    }, 60_000)
    afterAll(() => stack?.stop())

    accessSuite(() => stack, () => startNatsStack({ KEY_ACTIVATION_DELAY_S: '3600' }))
    staticSuite(() => stack)
  })
