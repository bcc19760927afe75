import { expect, it } from 'bun:test'
import { CHECK_TIMEOUT_MS } from '@lr/platform/health-listener'
import { createGateway } from '../src/app'
import { scriptedBus } from './fake-bus'

// A store whose server froze (SIGSTOP) had held the gateway's /readyz for 31 s: longer than any
// kubelet waits, so the probe failed on its own timeout with no answer naming the check.
it('counts a readiness check that hangs as failed after CHECK_TIMEOUT_MS, naming it, and answers the others', async () => {
  const { bus } = scriptedBus({})
  const app = createGateway({ bus, readiness: { bus: async () => true, stores: () => new Promise<boolean>(() => {}) }, optional: { redis: () => new Promise<boolean>(() => {}) } })
  const started = performance.now()
  const response = await app.handle(new Request('http://localhost/readyz'))
  const waited = performance.now() - started
  expect([response.status, await response.json()]).toEqual([503, { status: 'unavailable', checks: { bus: true, stores: false }, degraded: ['redis'] }])
  expect(waited).toBeGreaterThanOrEqual(CHECK_TIMEOUT_MS - 50)
  expect(waited).toBeLessThan(CHECK_TIMEOUT_MS + 1_500)
})
