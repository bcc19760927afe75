import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { join } from 'node:path'
import { ENTRY_POINTS } from '../deploy/entry-points'
import { call } from './harness/client'
import { freshMember, type Member } from './harness/fixtures'
import { freePort, waitUntil } from './harness/ports'
import { sample } from './harness/metrics'
import { skipReason } from './harness/servers'
import { spawnExtraResolver, type Stack, startInProcessStack, startNatsStack } from './harness/stack'
import { LIMITS_ENV } from './api/limits.suite'

// What a platform team sees of a running deployment: JSON log lines with levels, one access line
// per API request (whatever its status) that a service's lines join by request_id, and
// Prometheus metrics on the gateway's port, on a service's HEALTH_PORT, and on the resolver's
// HEALTH_PORT when set, else on its SHORT_PORT.
const ROOT = join(import.meta.dir, '..')
/** A scan from a browser: counted (Bun's own User-Agent is an HTTP library's, which is not). */
const BROWSER = { headers: { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0) Chrome/120.0 Safari/537.36' } }

/** Every JSON log line in a deployment's output, with the process that wrote it. */
function jsonLines(output: string): Record<string, any>[] {
  return output
    .split('\n')
    .map((line) => line.slice(line.indexOf('{')))
    .filter((line) => line.startsWith('{"level"'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line)]
      } catch {
        return [] // a line cut across two chunks of output
      }
    })
}

/** The metrics `read` answers once `series` has reached `least` (waiting up to `ms`). */
async function metricsOnceAtLeast(read: () => Promise<Response>, series: string, least: number, ms: number, what: string): Promise<string> {
  let metrics = ''
  await waitUntil(async () => {
    metrics = await (await read()).text()
    return (sample(metrics, series) ?? 0) >= least
  }, ms, what)
  return metrics
}

/**
 * A list asked twice, then after a create: the second answer is the page the gateway kept (the
 * service said unchanged), the third the new page the service sent (kept-pages.ts).
 */
async function keptPageCase(stack: Stack, member: Member, between: () => Promise<void> = async () => {}) {
  const counts = async () => {
    const metrics = await (await stack.request('/metrics')).text()
    return { kept: sample(metrics, 'lr_list_pages_total{source="kept"}') ?? 0, sent: sample(metrics, 'lr_list_pages_total{source="sent"}') ?? 0 }
  }
  const names = async () => (await call(stack, 'GET', '/v1/qrcodes', { key: member.key })).body.qrcodes.map((r: { name: string }) => r.name)
  const first = await names()
  const before = await counts()
  expect(await names()).toEqual(first)
  const unchanged = await counts()
  expect([unchanged.kept - before.kept, unchanged.sent - before.sent]).toEqual([1, 0])
  await between()
  expect((await call(stack, 'POST', '/v1/qrcodes', { key: member.key, body: { url: 'https://example.com/kept', name: 'after the kept page' } })).status).toBe(201)
  await between()
  expect(await names()).toEqual([...first, 'after the kept page'])
  const changed = await counts()
  expect([changed.kept - unchanged.kept, changed.sent - unchanged.sent]).toEqual([0, 1])
}

const skip = skipReason('nats-server')
if (skip) describe.skip(`observability over NATS (${skip})`, () => {})
else {
  describe('observability over NATS, separate processes', () => {
    let stack: Stack
    let member: Member
    beforeAll(async () => {
      stack = await startNatsStack({ LOG_LEVEL: 'debug', ...LIMITS_ENV })
      member = await freshMember(stack)
    }, 60_000)
    afterAll(() => stack?.stop())
    const lines = () => jsonLines(stack.output!())

    it('writes JSON lines with a level, a time and the process name', async () => {
      await waitUntil(() => lines().some((l) => l.process === 'gateway'), 5000, 'a gateway line')
      for (const line of lines()) {
        expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(line.level)
        expect(Number.isNaN(Date.parse(line.time))).toBe(false)
        expect(Object.keys(ENTRY_POINTS)).toContain(line.process)
        expect(line.msg).toBeString()
      }
    })

    it('logs one access line per request, 200, 404 and 429 alike, with key id and never the key', async () => {
      const ids = { ok: `obs-ok-${Date.now()}`, missing: `obs-404-${Date.now()}`, limited: `obs-429-${Date.now()}` }
      expect((await call(stack, 'GET', '/v1/qrcodes', { key: member.key, headers: { 'x-request-id': ids.ok } })).status).toBe(200)
      expect((await call(stack, 'GET', '/v1/nothing', { key: member.key, headers: { 'x-request-id': ids.missing } })).status).toBe(404)
      let status = 0
      for (let i = 0; i < 10 && status !== 429; i++) status = (await call(stack, 'GET', '/v1/qrcodes', { key: member.key, headers: { 'x-request-id': ids.limited } })).status
      expect(status).toBe(429)

      const access = (id: string) => lines().filter((l) => l.process === 'gateway' && l.msg === 'request' && l.request_id === id)
      await waitUntil(() => access(ids.limited).some((l) => l.status === 429), 5000, 'the 429 access line')
      expect(access(ids.ok)).toEqual([
        expect.objectContaining({ level: 'info', method: 'GET', route: '/v1/qrcodes', path: '/v1/qrcodes', status: 200, key_id: member.key_id, duration_ms: expect.any(Number) }),
      ])
      expect(access(ids.missing)).toEqual([expect.objectContaining({ method: 'GET', path: '/v1/nothing', status: 404, key_id: member.key_id })])
      expect(access(ids.limited).at(-1)).toEqual(expect.objectContaining({ status: 429, key_id: member.key_id }))
      expect(stack.output!()).not.toContain(member.key)
    })

    it('carries the request id over the bus, so the services\' lines join the gateway\'s', async () => {
      const id = `obs-join-${Date.now()}`
      await Bun.sleep(1100) // a fresh second of the burst budget
      expect((await call(stack, 'GET', '/v1/qrcodes', { key: member.key, headers: { 'x-request-id': id } })).status).toBe(200)
      const joined = () => lines().filter((l) => l.request_id === id)
      await waitUntil(() => joined().some((l) => l.process === 'records'), 5000, 'the records service line')
      expect(joined().filter((l) => l.process === 'auth').map((l) => l.subject)).toContain('auth.v1.verify')
      expect(joined().filter((l) => l.process === 'records').map((l) => l.subject)).toContain('records.v1.list')
    })

    it('serves Prometheus metrics on the gateway port: requests by route and status, 429s by reason, bus latency', async () => {
      const metrics = await (await stack.request('/metrics')).text()
      expect(sample(metrics, 'lr_http_requests_total{server="api",route="/v1/qrcodes",method="GET",status="200"}')).toBeGreaterThanOrEqual(1)
      expect(sample(metrics, 'lr_http_requests_total{server="api",route="unmatched",method="GET",status="429"}')).toBeGreaterThanOrEqual(1)
      expect(sample(metrics, 'lr_http_request_duration_seconds_count{server="api",route="/v1/qrcodes",method="GET",status="200"}')).toBeGreaterThanOrEqual(1)
      expect(sample(metrics, 'lr_rate_limited_total{reason="per_second"}')).toBeGreaterThanOrEqual(1)
      expect(sample(metrics, 'lr_bus_request_duration_seconds_count{subject="records.v1.list",outcome="ok"}')).toBeGreaterThanOrEqual(1)
      expect(sample(metrics, 'process_resident_memory_bytes')).toBeGreaterThan(0)
    })

    it('counts a 404 over NATS as refused in the gateway\'s bus metrics, not as error (test/metrics-outcomes.test.ts)', async () => {
      await Bun.sleep(1100)
      expect((await call(stack, 'GET', '/v1/qrcodes/qr_nosuchrecord', { key: member.key })).status).toBe(404)
      const metrics = await (await stack.request('/metrics')).text()
      const count = (outcome: string) => sample(metrics, `lr_bus_request_duration_seconds_count{subject="records.v1.get",outcome="${outcome}"}`)
      expect([count('refused'), count('error')]).toEqual([1, undefined])
    })

    it('answers a list that did not change from the page the gateway kept, and the new page after a write', async () => {
      await Bun.sleep(1100)
      // A fresh key: this one's burst is 3 requests, and a token comes back each second.
      await keptPageCase(stack, await freshMember(stack), () => Bun.sleep(1100))
    })

    it('serves metrics on the resolver port while its HEALTH_PORT is unset: answers by status and scans published', async () => {
      await Bun.sleep(1100)
      const code = (await call(stack, 'POST', '/v1/dynqrcodes', { key: member.key, body: { destination_url: 'https://example.com/m', name: 'M' } })).body.created[0].code
      expect((await stack.short(`/${code}`, BROWSER)).status).toBe(302)
      expect((await stack.short('/NoSuchCode1')).status).toBe(404)
      const metrics = await metricsOnceAtLeast(() => stack.short('/metrics'), 'lr_scans_published_total', 1, 5000, 'the scan to be acknowledged')
      expect(sample(metrics, 'lr_http_requests_total{server="resolver",route="/:code",method="GET",status="302"}')).toBeGreaterThanOrEqual(1)
      expect(sample(metrics, 'lr_http_requests_total{server="resolver",route="/:code",method="GET",status="404"}')).toBeGreaterThanOrEqual(1)
      expect(sample(metrics, 'lr_scans_buffered')).toBe(0)
      expect(sample(metrics, 'lr_scans_dropped_total')).toBe(0)
    })

    it('serves a resolver\'s metrics on its HEALTH_PORT when set, and not on SHORT_PORT: /metrics there is a 404 as any path that is no code', async () => {
      await Bun.sleep(1100)
      const healthPort = await freePort()
      const resolver = await spawnExtraResolver(stack, { HEALTH_PORT: String(healthPort), RESOLVER_THREADS: '2' })
      try {
        const code = (await call(stack, 'POST', '/v1/dynqrcodes', { key: member.key, body: { destination_url: 'https://example.com/h', name: 'H' } })).body.created[0].code
        expect((await resolver.short(`/${code}`, BROWSER)).status).toBe(302)
        const answer = await resolver.short('/metrics')
        expect([answer.status, await answer.text()]).toEqual([404, 'Not found: no such short link.\n'])
        const metrics = await metricsOnceAtLeast(() => fetch(`http://127.0.0.1:${healthPort}/metrics`), 'lr_scans_published_total', 1, 5000, 'the scan to be acknowledged')
        expect(sample(metrics, 'lr_http_requests_total{server="resolver",route="/:code",method="GET",status="302"}')).toBe(1)
        // The start-up check for `/` and the /metrics above.
        expect(sample(metrics, 'lr_http_requests_total{server="resolver",route="/:code",method="GET",status="404"}')).toBeGreaterThanOrEqual(2)
      } finally {
        await resolver.stop()
      }
    }, 30_000)

    it('serves a service\'s metrics on its HEALTH_PORT: store latency, handler latency and the consumer\'s lag', async () => {
      const port = await freePort()
      const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.analytics)], { cwd: ROOT, env: { ...stack.env, HEALTH_PORT: String(port) }, stdout: 'ignore', stderr: 'ignore' })
      try {
        const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`)
        await waitUntil(async () => (await get('/readyz')).status === 200, 15_000, 'the second analytics replica')
        let metrics = ''
        await waitUntil(async () => {
          metrics = await (await get('/metrics')).text()
          return ['analytics', 'scans-relay'].every((consumer) => sample(metrics, `lr_jetstream_consumer_pending{stream="SCAN_BATCHES",consumer="${consumer}"}`) !== undefined)
        }, 10_000, 'the lag gauges of the analytics consumer and the relay')
        expect(sample(metrics, 'lr_jetstream_consumer_pending{stream="SCAN_BATCHES",consumer="analytics"}')).toBeGreaterThanOrEqual(0)
        expect(sample(metrics, 'lr_store_operation_duration_seconds_count{store="analytics",operation="ping",outcome="ok"}')).toBeGreaterThanOrEqual(1)
        expect(metrics).toContain('lr_bus_handler_duration_seconds')
      } finally {
        proc.kill('SIGTERM')
        await proc.exited
      }
    }, 30_000)

    it('counts on the analytics side every scan it took in (lr_scans_ingested_total), to set against the resolver\'s lr_scans_published_total', async () => {
      await Bun.sleep(1100)
      // The stack's analytics has no probe listener: a replica with one takes its ingest lease.
      await stack.stopProcess!('analytics')
      const port = await freePort()
      const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.analytics)], { cwd: ROOT, env: { ...stack.env, HEALTH_PORT: String(port) }, stdout: 'ignore', stderr: 'ignore' })
      try {
        await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, 15_000, 'the analytics replica')
        const code = (await call(stack, 'POST', '/v1/dynqrcodes', { key: member.key, body: { destination_url: 'https://example.com/i', name: 'I' } })).body.created[0].code
        for (let i = 0; i < 3; i++) expect((await stack.short(`/${code}`, BROWSER)).status).toBe(302)
        const metrics = await metricsOnceAtLeast(() => fetch(`http://127.0.0.1:${port}/metrics`), 'lr_scans_ingested_total{outcome="counted"}', 3, 10_000, 'the scans counted by analytics')
        expect(sample(metrics, 'lr_scans_ingested_total{outcome="counted"}')).toBe(3)
        expect((await call(stack, 'GET', `/v1/dynqrcodes/${code}/analytics`, { key: member.key })).body.total_scans).toBe(3)
      } finally {
        proc.kill('SIGTERM')
        await proc.exited
        await stack.startProcess!('analytics')
      }
    }, 60_000)

    it('writes nothing below LOG_LEVEL', async () => {
      const port = await freePort()
      const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.records)], { cwd: ROOT, env: { ...stack.env, LOG_LEVEL: 'warn', HEALTH_PORT: String(port) }, stdout: 'pipe', stderr: 'pipe' })
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, 15_000, 'a records replica')
      proc.kill('SIGTERM')
      const [out, code] = await Promise.all([new Response(proc.stdout as ReadableStream).text(), proc.exited])
      expect(code).toBe(0)
      expect(jsonLines(out).filter((l) => l.level === 'info' || l.level === 'debug')).toEqual([])
    }, 30_000)
  })
}

describe('observability in one process', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startInProcessStack()
  })
  afterAll(() => stack?.stop())

  it('serves the same metrics on the API port', async () => {
    const member = await freshMember(stack)
    expect((await call(stack, 'GET', '/v1/qrcodes', { key: member.key })).status).toBe(200)
    let metrics = ''
    // The sample is taken once the response went out.
    await waitUntil(async () => {
      metrics = await (await stack.request('/metrics')).text()
      return sample(metrics, 'lr_http_requests_total{server="api",route="/v1/qrcodes",method="GET",status="200"}') !== undefined
    }, 2000, 'the request sample')
    expect(sample(metrics, 'lr_http_requests_total{server="api",route="/v1/qrcodes",method="GET",status="200"}')).toBeGreaterThanOrEqual(1)
    expect(sample(metrics, 'lr_bus_request_duration_seconds_count{subject="records.v1.list",outcome="ok"}')).toBeGreaterThanOrEqual(1)
    expect(sample(metrics, 'lr_store_operation_duration_seconds_count{store="records",operation="list",outcome="ok"}')).toBeGreaterThanOrEqual(1)
  })

  it('answers a list that did not change from the page the gateway kept, and the new page after a write', async () => {
    await keptPageCase(stack, await freshMember(stack))
  })

  it('counts the scans analytics took in on the API port too (lr_scans_ingested_total)', async () => {
    // Metrics are the test process's: the scans of the tests (and files) before count too.
    const read = async () => {
      const metrics = await (await stack.request('/metrics')).text()
      const count = (series: string) => sample(metrics, series) ?? 0
      return { counted: count('lr_scans_ingested_total{outcome="counted"}'), published: count('lr_scans_published_total') }
    }
    // Steady: what analytics counts of them (bots and repeats are not counted) no longer moves.
    let before = await read()
    await waitUntil(async () => {
      await Bun.sleep(300)
      const now = await read()
      const steady = now.counted === before.counted
      before = now
      return steady
    }, 10_000, 'the scans before counted')
    const member = await freshMember(stack)
    const code = (await call(stack, 'POST', '/v1/dynqrcodes', { key: member.key, body: { destination_url: 'https://example.com/i', name: 'I' } })).body.created[0].code
    for (let i = 0; i < 2; i++) expect((await stack.short(`/${code}`, BROWSER)).status).toBe(302)
    await metricsOnceAtLeast(() => stack.request('/metrics'), 'lr_scans_ingested_total{outcome="counted"}', before.counted + 2, 5000, 'the scans counted by analytics')
    await Bun.sleep(200) // nothing more comes
    expect(await read()).toEqual({ counted: before.counted + 2, published: before.published + 2 })
  })
})
