import { afterAll, beforeAll, describe } from 'bun:test'
import { accessSuite } from './api/access.suite'
import { staticSuite } from './api/static.suite'
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
})
