import { afterEach, describe, expect, it } from 'bun:test'
import { installLogger, log } from '@lr/platform/log'
import { captureLog } from '@lr/platform/testing/log-capture'
import { createLocalBus } from '@lr/platform/bus-local'
import { type HealthListener, startHealthListener } from '@lr/platform/health-listener'
import { createBusScanPublisher } from '@lr/platform/scan-publisher'
import { dynamicChangedSubject, loadConfig, type Logger } from '@lr/proto'
import { freePort } from '../../../../test/harness/ports'
import { sample } from '../../../../test/harness/metrics'
import { serveDynamic } from '../../src/handlers'
import { createResolverFromConfig } from '../../src/resolver/bus-feed'
import { serveShortLinks } from '../../src/resolver/serve'
import { personal, setup } from '../fixtures'
import { BROWSER, KEY } from './fixtures'

// serveShortLinks as a process's main.ts calls it: SHORT_PORT answers /metrics only while
// HEALTH_PORT is unset; set, the probe listener serves them, the threads' answers counted in.

const closing: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close()
})

const RESOLVER_302 = 'lr_http_requests_total{server="resolver",route="/:code",method="GET",status="302"}'

/** Short links over a real dynamic service on the local bus, with `env` as the process's settings; a probe listener as the resolver's main.ts starts it. */
async function serve(env: Record<string, string | undefined>) {
  const config = loadConfig({ SHORT_PORT: '0', VISITOR_HASH_KEY: KEY, ...env })
  const bus = createLocalBus()
  const ctx = setup({ announce: (entry) => bus.publish(dynamicChangedSubject(entry.code), entry) })
  const stopServing = serveDynamic(bus, ctx.service)
  const scans = createBusScanPublisher(bus)
  const short = await serveShortLinks({ config, bus, scans, resolver: () => createResolverFromConfig(bus, config, scans.publish) })
  const health: HealthListener | undefined = config.HEALTH_PORT > 0 ? startHealthListener(config.HEALTH_PORT, {}) : undefined
  closing.push(async () => {
    await health?.stop()
    await short.stop()
    scans.close()
    stopServing()
    await bus.close()
    ctx.close()
  })
  const code = (await ctx.service.create(personal, { destination_url: 'https://example.com/landing', name: 'Code' })).created[0]!.code
  // A connection each: with threads, the kernel spreads them over every listener.
  const get = (port: number, path: string) => fetch(`http://127.0.0.1:${port}${path}`, { redirect: 'manual', keepalive: false, headers: { 'user-agent': BROWSER } })
  return { short, health, code, get }
}

for (const threads of ['0', '2'])
  describe(`short links with RESOLVER_THREADS=${threads}`, () => {
    it('answer /metrics on SHORT_PORT with the process\'s metrics while HEALTH_PORT is unset', async () => {
      const { short, code, get } = await serve({ RESOLVER_THREADS: threads })
      expect(short.threads).toBe(Number(threads))
      const before = sample(await (await get(short.port, '/metrics')).text(), RESOLVER_302) ?? 0
      for (let i = 0; i < 8; i++) expect((await get(short.port, `/${code}`)).status).toBe(302)
      const answers = await Promise.all(Array.from({ length: 8 }, () => get(short.port, '/metrics')))
      for (const answer of answers) expect(answer.headers.get('content-type')).toStartWith('text/plain; version=0.0.4')
      expect(sample(await answers[0]!.text(), RESOLVER_302)).toBe(before + 8)
    })

    it('answer /metrics on SHORT_PORT as any path that is no code (404, plain text) with HEALTH_PORT set, which serves them, every listener\'s answers counted', async () => {
      const { short, health, code, get } = await serve({ RESOLVER_THREADS: threads, HEALTH_PORT: String(await freePort()) })
      const metrics = async () => (await get(health!.port, '/metrics')).text()
      const before = await metrics()
      for (let i = 0; i < 8; i++) expect((await get(short.port, `/${code}`)).status).toBe(302)
      // Every listener of SHORT_PORT (each thread's) gets its share of these connections.
      const answers = await Promise.all(Array.from({ length: 16 }, () => get(short.port, '/metrics')))
      for (const answer of answers) {
        expect([answer.status, answer.headers.get('content-type'), await answer.text()]).toEqual([404, 'text/plain; charset=utf-8', 'Not found: no such short link.\n'])
      }
      const after = await metrics()
      expect(sample(after, RESOLVER_302)).toBe((sample(before, RESOLVER_302) ?? 0) + 8)
      const notFound = 'lr_http_requests_total{server="resolver",route="/:code",method="GET",status="404"}'
      expect(sample(after, notFound)).toBe((sample(before, notFound) ?? 0) + 16)
    })
  })

// The short-link host is public: while the dynamic service does not answer, every scan of a code
// the resolver does not hold is a 503, and any client can send them as fast as it likes (random
// codes). Each had written an `error` line: 30,920 lines (5.3 MB) in 3 s from one wrk client.
describe('short links while the dynamic service does not answer', () => {
  it('log their 503s once per 10 s with how many were not written (each counted in the metrics), not a line per request', async () => {
    const config = loadConfig({ SHORT_PORT: '0', VISITOR_HASH_KEY: KEY, RESOLVER_THREADS: '0' })
    const bus = createLocalBus()
    const scans = createBusScanPublisher(bus)
    const captured = captureLog()
    const short = await serveShortLinks({ config, bus, scans, resolver: () => createResolverFromConfig(bus, config, scans.publish) })
    closing.push(async () => {
      captured.restore()
      await short.stop()
      scans.close()
      await bus.close()
    })
    const unavailable = 'lr_http_requests_total{server="resolver",route="/:code",method="GET",status="503"}'
    const metricsOf = async () => sample(await (await fetch(`http://127.0.0.1:${short.port}/metrics`)).text(), unavailable) ?? 0
    const before = await metricsOf()
    for (let i = 0; i < 40; i++) expect((await fetch(`http://127.0.0.1:${short.port}/Flood${String(i).padStart(4, '0')}`)).status).toBe(503)
    const lines = captured.lines.filter((line) => line.msg === 'request' && line.status === 503)
    expect(lines.map((line) => [line.path, line.repeated])).toEqual([['/Flood0000', undefined]])
    expect(await metricsOf()).toBe(before + 40)
  })
})

describe('VISITOR_HASH_KEY', () => {
  /** The `warn` lines written while short links start with `env`. */
  async function warningsAt(env: Record<string, string | undefined>) {
    const previous = log()
    const warnings: Record<string, unknown>[] = []
    const quiet = () => undefined
    const logger = { warn: (fields: object, msg: string) => void warnings.push({ ...fields, msg }), error: quiet, info: quiet, debug: quiet, child: () => logger } as unknown as Logger
    installLogger(logger)
    try {
      await serve({ RESOLVER_THREADS: '0', ...env })
    } finally {
      installLogger(previous)
    }
    return warnings.filter((line) => line.setting === 'VISITOR_HASH_KEY')
  }

  it('unset: one warn line at start, since its public development value lets a scan\'s address be recovered', async () => {
    const lines = await warningsAt({ VISITOR_HASH_KEY: undefined })
    expect(lines).toHaveLength(1)
    expect(lines[0]!.msg).toStartWith('VISITOR_HASH_KEY is not set: visitor ids use a public development key')
  })

  it('set: no such line', async () => {
    expect(await warningsAt({})).toEqual([])
  })
})
