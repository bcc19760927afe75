import { describe, expect, it } from 'bun:test'
import { call } from '../harness/client'
import { freshMember } from '../harness/fixtures'
import type { Stack } from '../harness/stack'

/** Without WEBHOOKS_ALLOW_PRIVATE=1 (the main stacks): loopback and private destinations are refused. */
export function webhookDestinationSuite(stack: () => Stack) {
  describe('webhook destinations', () => {
    it('refuses loopback, private and link-local destinations with 400', async () => {
      const own = await freshMember(stack())
      const urls = ['http://127.0.0.1:8080/hook', 'http://[::1]/hook', 'http://10.0.0.7/hook', 'http://169.254.169.254/latest', 'http://[::ffff:192.168.1.1]/x', 'http://localhost:3000/x']
      const answers = await Promise.all(urls.map((url) => call(stack(), 'POST', '/v1/webhooks', { key: own.key, body: { url, events: ['scan'] } })))
      expect(answers.map((a) => a.status)).toEqual(Array(urls.length).fill(400))
      expect(answers.every((a) => a.body.error.includes('WEBHOOKS_ALLOW_PRIVATE=1'))).toBe(true)
      expect((await call(stack(), 'GET', '/v1/webhooks', { key: own.key })).body).toEqual({ webhooks: [] })
    })
  })
}
