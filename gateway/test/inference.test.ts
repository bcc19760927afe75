import { describe, expect, it } from 'bun:test'
import { createGateway } from '../src/app'
import { GOOD_KEY, scriptedBus } from './fake-bus'

/**
 * Elysia compiles each route from what its hooks read (its "sucrose" inference of their source).
 * A global hook that hands its whole context to a function counts as reading everything, and then
 * every request parses its cookies, query and headers into objects nobody reads: about 10 % of a
 * list's CPU in one process (bench/ANALYSIS.md, twenty-second session).
 */
describe("the gateway's global hooks", () => {
  const app = createGateway({ bus: scriptedBus({}).bus })

  it('read only what they use: no route parses cookies, query or headers on their account', () => {
    // Elysia keeps the app-wide inference in a protected field; the routes compile from it.
    const { cookie, query, headers, body } = (app as unknown as { inference: Record<string, boolean> }).inference
    expect({ cookie, query, headers, body }).toEqual({ cookie: false, query: false, headers: false, body: false })
  })

  it('still send the error path its answer (a 403 from the key check, a 404) with its body', async () => {
    const forbidden = await app.handle(new Request('http://localhost/v1/qrcodes', { headers: { 'x-api-key': 'lr_nope' } }))
    expect(forbidden.status).toBe(403)
    expect(await forbidden.json()).toEqual({ error: 'invalid API key' })
    const missing = await app.handle(new Request('http://localhost/v1/nowhere', { headers: { 'x-api-key': GOOD_KEY } }))
    expect(missing.status).toBe(404)
    expect(await missing.json()).toEqual({ error: 'no route GET /v1/nowhere' })
  })
})
