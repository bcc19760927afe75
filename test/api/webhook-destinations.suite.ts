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

    it('refuses a URL that reads as another host than it opens (or whose normal form is too long), and keeps the others in their normal form', async () => {
      const own = await freshMember(stack())
      // Public address literals: a create resolves nothing, and no event of this library is sent.
      const misleading = ['https://1.1.1.1/\r\n.evil.example/x', 'https://1.1.1.1\t/x', 'https://1.1.1.1/ x', 'https://@1.1.1.1/x', `https://1.1.1.1/${'é'.repeat(700)}`]
      for (const url of misleading) {
        const res = await call(stack(), 'POST', '/v1/webhooks', { key: own.key, body: { url, events: ['scan'] } })
        expect({ url, status: res.status, error: res.body.error }).toEqual({ url, status: 400, error: expect.stringContaining('url must') })
      }
      expect((await call(stack(), 'GET', '/v1/webhooks', { key: own.key })).body).toEqual({ webhooks: [] })
      const normalForms = { 'HTTPS://1.1.1.1:443/Hooks/../qr?a=b': 'https://1.1.1.1/qr?a=b', 'https://1.1.1.1\\@hooks.example/x': 'https://1.1.1.1/@hooks.example/x' }
      for (const [url, normal] of Object.entries(normalForms)) {
        const created = await call(stack(), 'POST', '/v1/webhooks', { key: own.key, body: { url, events: ['scan'] } })
        expect({ url, status: created.status, stored: created.body.url }).toEqual({ url, status: 201, stored: normal })
      }
      const listed = (await call(stack(), 'GET', '/v1/webhooks', { key: own.key })).body.webhooks
      expect(listed.map((w: { url: string }) => w.url)).toEqual(Object.values(normalForms))
      for (const { id } of listed) await call(stack(), 'DELETE', `/v1/webhooks/${id}`, { key: own.key })
    })
  })
}
