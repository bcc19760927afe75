import { describe, expect, it } from 'bun:test'
import { metricsResponse } from '@lr/platform/metrics'
import { captureLog } from '@lr/platform/testing/log-capture'
import { observeResolver } from '../../src/resolver/observe'

const redirect = () => new Response(null, { status: 302, headers: { location: 'https://example.com/' } })
const request = () => new Request('http://short.test/AbCdEf12345')

/** This process's count of resolver answers with `status` to `method` (lr_http_requests_total). */
async function answered(status: number, method = 'GET'): Promise<number> {
  const { routes } = observeResolver(redirect, metricsResponse)
  const text = await (await routes['/metrics']!()).text()
  const line = text.split('\n').find((l) => l.startsWith('lr_http_requests_total{') && l.includes('server="resolver"') && l.includes(`method="${method}"`) && l.includes(`status="${status}"`))
  return line ? Number(line.split(' ').at(-1)) : 0
}

describe('observeResolver', () => {
  it('passes an answer given at once through at once, counted', async () => {
    const before = await answered(302)
    const answer = observeResolver(redirect, metricsResponse).fetch(request())
    expect(answer).toBeInstanceOf(Response)
    expect((answer as Response).status).toBe(302)
    expect(await answered(302)).toBe(before + 1)
  })

  it('waits for an answer that is a promise, counted', async () => {
    const before = await answered(302)
    const answer = observeResolver(async () => redirect(), metricsResponse).fetch(request())
    expect(answer).toBeInstanceOf(Promise)
    expect((await answer).status).toBe(302)
    expect(await answered(302)).toBe(before + 1)
  })

  it('routes /metrics to the metrics answer only when given one: without, it is the resolver\'s path like any other, counted', async () => {
    expect(Object.keys(observeResolver(redirect, metricsResponse).routes)).toEqual(['/metrics'])
    const notFound = () => new Response('Not found: no such short link.\n', { status: 404 })
    const { routes, fetch } = observeResolver(notFound)
    expect(routes).toEqual({})
    const before = await answered(404)
    const answer = await fetch(new Request('http://short.test/metrics'))
    expect([answer.status, await answer.text()]).toEqual([404, 'Not found: no such short link.\n'])
    expect(await answered(404)).toBe(before + 1)
  })

  it('counts each method\'s 405 under its own method, whichever came first', async () => {
    const notAllowed = () => new Response('Method not allowed.\n', { status: 405, headers: { allow: 'GET, HEAD' } })
    const { fetch } = observeResolver(notAllowed)
    const before = await Promise.all(['POST', 'PUT', 'DELETE'].map((method) => answered(405, method)))
    for (const method of ['POST', 'PUT', 'PUT', 'DELETE', 'PUT']) await fetch(new Request('http://short.test/AbCdEf12345', { method }))
    expect(await Promise.all(['POST', 'PUT', 'DELETE'].map((method) => answered(405, method)))).toEqual([before[0]! + 1, before[1]! + 3, before[2]! + 1])
  })

  for (const [how, fetch] of [
    ['throws', () => { throw new Error('boom') }],
    ['rejects', async () => { throw new Error('boom') }],
  ] as const)
    it(`answers 503 with Retry-After when the resolver ${how}, counted`, async () => {
      const before = await answered(503)
      const answer = await observeResolver(fetch, metricsResponse).fetch(request())
      expect([answer.status, answer.headers.get('retry-after')]).toEqual([503, '1'])
      expect(await answered(503)).toBe(before + 1)
    })

  it('writes a failing resolver\'s lines once per 10 s, not per request (any client of the public host can repeat one), each answer counted', async () => {
    const { fetch } = observeResolver(() => { throw new Error('boom') }, metricsResponse)
    const before = await answered(503)
    const captured = captureLog()
    try {
      for (let i = 0; i < 5; i++) expect((await fetch(request())).status).toBe(503)
    } finally {
      captured.restore()
    }
    expect(captured.lines.map((line) => [line.msg, line.status ?? line.err?.message])).toEqual([['resolver failed', 'boom'], ['request', 503]])
    expect(await answered(503)).toBe(before + 5)
  })
})
