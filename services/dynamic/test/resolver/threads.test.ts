import { afterEach, describe, expect, it } from 'bun:test'
import { usableCpus } from '@lr/platform/cpus'
import { defaultResolverThreads } from '../../src/resolver/serve'
import { join } from 'node:path'
import { createLocalBus } from '@lr/platform/bus-local'
import { httpRequests } from '@lr/platform/metrics'
import { StartupError } from '@lr/platform/startup'
import { AppError, DYNAMIC_SUBJECTS } from '@lr/proto'
import { captureLog } from '@lr/platform/testing/log-capture'
import { modulesLoadedBy } from '@lr/platform/testing/loaded-modules'
import { startResolverThreads } from '../../src/resolver/threads'
import { personal } from '../fixtures'
import { BROWSER, KEY } from './fixtures'
import { closeAll, created, DESTINATION, FALLBACK, type Running, start, until, watchPosts } from './threads-harness'

// Resolver threads over a real dynamic service on the local bus (./threads-harness.ts): HTTP on a
// shared port, answered by two threads, each with its own cache; this thread holds the bus and
// collects the scans.
afterEach(closeAll)

describe('resolver threads', () => {
  it('answer a code from every thread and hand each counted scan over once, with its fields', async () => {
    const r = await start()
    const code = await created(r)
    const answers = await r.many(code, 40)
    expect(answers.map((a) => [a.status, a.headers.get('location')])).toEqual(Array(40).fill([302, DESTINATION]))
    await until(() => r.scans.length >= 40, '40 scans')
    await Bun.sleep(20)
    expect(r.scans).toHaveLength(40)
    expect(new Set(r.scans.map((s) => s.scan_id)).size).toBe(40)
    for (const scan of r.scans) {
      expect(scan).toMatchObject({ code, user_agent: BROWSER, country: 'unknown' })
      expect(scan.visitor_id).toMatch(/^[0-9a-f]{64}$/)
    }
    // Handed over in batches, each naming its code and counting its scans.
    expect(r.batches.reduce((sum, batch) => sum + batch.count, 0)).toBe(40)
    for (const batch of r.batches) expect([batch.codes, batch.count]).toEqual([code, JSON.parse(batch.events).length])
    // A bot and a HEAD are answered and never counted; an unknown code is 404 without a lookup of a bad path.
    expect((await r.get(code, { headers: { 'user-agent': 'Googlebot/2.1' } })).status).toBe(302)
    expect((await r.get(code, { method: 'HEAD' })).status).toBe(302)
    expect((await r.get('NoSuchCode1')).status).toBe(404)
    await Bun.sleep(20)
    expect(r.scans).toHaveLength(40)
  })

  it('tell every thread of a change: after a delete no connection gets the old destination', async () => {
    const r = await start()
    const code = await created(r)
    // Every thread has the code in its cache.
    expect((await r.many(code, 40)).every((a) => a.status === 302)).toBe(true)
    await r.service.delete(personal, code)
    await Bun.sleep(20)
    expect((await r.many(code, 40)).map((a) => a.status)).toEqual(Array(40).fill(410))
  })

  it('tell every thread of the changes of one burst in one message: a batch of twenty codes crosses once per thread, and each thread applies every change of a message', async () => {
    const r = await start()
    const posted: unknown[] = []
    const spy = watchPosts('changed', (message) => posted.push(message))
    let codes: string[] = []
    try {
      const body = { dynqrcodes: Array.from({ length: 20 }, (_, i) => ({ destination_url: `${DESTINATION}/${i}`, name: `Code ${i}` })) }
      codes = (await r.service.batch(personal, body)).created.map((c) => c.code)
      await Bun.sleep(20)
      expect(posted).toHaveLength(2)
      for (const message of posted) expect((message as { entries: { code: string }[] }).entries.map((e) => e.code)).toEqual(codes)
    } finally {
      spy.mockRestore()
    }
    // Every thread applies every change of a message: with all twenty in each cache, twenty deletes at once leave none answered.
    for (const [i, code] of codes.entries()) expect((await r.many(code, 8)).map((a) => a.headers.get('location'))).toEqual(Array(8).fill(`${DESTINATION}/${i}`))
    await Promise.all(codes.map((code) => r.service.delete(personal, code)))
    await Bun.sleep(20)
    for (const code of codes) expect((await r.many(code, 8)).map((a) => a.status)).toEqual(Array(8).fill(410))
  })

  it('forget every cached code when the bus resumed: a change missed meanwhile is followed by the next scan on every thread, and one line counts what they forgot', async () => {
    const r = await start()
    const code = await created(r)
    expect((await r.many(code, 40)).map((a) => a.headers.get('location'))).toEqual(Array(40).fill(DESTINATION))
    r.events.missed = true
    await r.service.update(personal, code, { destination_url: `${DESTINATION}/new` })
    await Bun.sleep(20)
    // Every thread still holds the old destination: the change never reached them.
    expect(new Set((await r.many(code, 20)).map((a) => a.headers.get('location')))).toEqual(new Set([DESTINATION]))
    const captured = captureLog()
    try {
      r.resume()
      await until(() => captured.lines.some((line) => line.msg.startsWith('bus reconnected')), 'the threads to forget')
      // One code in each of the two threads' caches.
      expect(captured.lines.filter((line) => line.msg.startsWith('bus reconnected'))).toEqual([{ codes: 2, msg: 'bus reconnected: cached codes forgotten, each is looked up again at its next scan' }])
    } finally {
      captured.restore()
    }
    expect((await r.many(code, 40)).map((a) => a.headers.get('location'))).toEqual(Array(40).fill(`${DESTINATION}/new`))
  })

  it('report a thread that ends while serving, once, naming it (serve.ts stops the process on it); a stop after it still ends', async () => {
    const workers: Worker[] = []
    const spy = watchPosts('start', (_, worker) => workers.push(worker))
    let r: Running
    try {
      r = await start()
    } finally {
      spy.mockRestore()
    }
    expect(workers).toHaveLength(2)
    expect(r.failures).toEqual([])
    workers[1]!.terminate()
    await until(() => r.failures.length > 0, 'the ended thread reported')
    await Bun.sleep(50)
    expect(r.failures.map((error) => error.message)).toEqual(['resolver thread 2 ended'])
    // The ended thread will never say `stopped`: a stop does not wait out its 10 s fallback for it.
    const stopping = performance.now()
    await r.threads.stop()
    expect(performance.now() - stopping).toBeLessThan(5_000)
  })

  it('stay exact at a cap however the threads share its scans, starting from analytics\' count', async () => {
    const r = await start({ analyticsCount: 5 })
    const code = await created(r, { max_scans: 30, fallback_url: FALLBACK })
    // 80 scans at once, over two threads: exactly 30 - 5 reach the destination.
    const answers = await r.many(code, 80)
    const places = answers.map((a) => a.headers.get('location'))
    expect(places.filter((p) => p === DESTINATION)).toHaveLength(25)
    expect(places.filter((p) => p === FALLBACK)).toHaveLength(55)
    await until(() => r.scans.length >= 80, '80 scans')
    expect(r.scans.filter((s) => s.outcome === undefined)).toHaveLength(25)
    expect(r.scans.filter((s) => s.outcome === 'fallback')).toHaveLength(55)
  })

  it('free the count slots of capped codes no thread caches any more, and give them to new codes at zero', async () => {
    const r = await start({ cacheEntries: 2, slotSweepEvery: 4 })
    const where = async (code: string) => (await r.get(code)).headers.get('location')
    // Every code reaches its cap of 1: a slot given on at its count would send a new code to its fallback.
    const first: string[] = []
    for (let i = 0; i < 16; i++) first.push(await created(r, { max_scans: 1, fallback_url: FALLBACK }))
    for (const code of first) expect([await where(code), await where(code)]).toEqual([DESTINATION, FALLBACK])
    // Held after a sweep: what two threads of two codes each cache. Before, a slot per capped
    // code ever looked up: 16 here, 32 after the next ones.
    await r.threads.sweepCountSlots()
    expect(r.threads.countSlots).toBeLessThanOrEqual(4)
    const next: (string | null)[] = []
    for (let i = 0; i < 16; i++) next.push(await where(await created(r, { max_scans: 1, fallback_url: FALLBACK })))
    expect(next).toEqual(Array(16).fill(DESTINATION))
    // Swept as new codes come (every 4 here): never near one slot per code.
    expect(r.threads.countSlots).toBeLessThan(16)
    await r.threads.sweepCountSlots()
    expect(r.threads.countSlots).toBeLessThanOrEqual(4)
  })

  it('count every thread\'s answers in the metrics this thread is scraped for, also on the short-link port', async () => {
    const r = await start()
    const code = await created(r)
    const counted = async () => {
      const text = await (await fetch(`http://127.0.0.1:${r.threads.port}/metrics`)).text()
      const line = text.split('\n').find((l) => l.startsWith('lr_http_requests_total{') && l.includes('server="resolver"') && l.includes('status="302"') && l.includes('method="GET"'))
      return Number(line?.split(' ').at(-1) ?? 0)
    }
    const before = await counted()
    await r.many(code, 30)
    expect(await counted()).toBe(before + 30)
    // The registry of this thread holds them too (what the API's /metrics writes).
    const series = (await httpRequests.get()).values.find((v) => v.labels.server === 'resolver' && v.labels.status === '302' && v.labels.method === 'GET')
    expect(series?.value).toBe(before + 30)
  })

  it('hand every scan over when stopped, answer the requests under way, and free the port', async () => {
    const r = await start()
    const code = await created(r)
    const answers = await r.many(code, 50)
    await r.threads.stop()
    expect(answers.every((a) => a.status === 302)).toBe(true)
    expect(r.scans).toHaveLength(50)
    expect(r.failures).toEqual([])
    const again = Bun.serve({ port: r.threads.port, fetch: () => new Response('free') })
    again.stop(true)
  })

  it('write a thread\'s log lines with this thread\'s logger: a failed lookup is one error line, and the scan answer 503', async () => {
    const r = await start()
    r.bus.serve(DYNAMIC_SUBJECTS.resolve, async () => {
      throw new AppError('unavailable', 'the store is away')
    })
    const captured = captureLog()
    try {
      // The dynamic service above also answers: ask until the failing handler gets the turn.
      let answer = await r.get('NoSuchCode2')
      for (let i = 3; answer.status !== 503 && i < 20; i++) answer = await r.get(`NoSuchCode${i}`)
      expect([answer.status, answer.headers.get('retry-after')]).toEqual([503, '1'])
      await until(() => captured.lines.some((line) => line.msg === 'resolver lookup failed'), 'the log line')
      const line = captured.lines.find((line) => line.msg === 'resolver lookup failed')
      expect(line).toMatchObject({ err: { type: 'AppError', code: 'unavailable', message: 'the store is away' } })
      expect([line!.error, line!.err.stack]).toEqual([undefined, undefined])
    } finally {
      captured.restore()
    }
  })

  it('refuse a port another listener holds, also one that shares ports (SO_REUSEPORT): one line naming it', async () => {
    for (const reusePort of [false, true]) {
      const taken = Bun.serve({ port: 0, reusePort, fetch: () => new Response('other') })
      try {
        const bus = createLocalBus()
        const error = await startResolverThreads({
          threads: 2, port: taken.port!, bus, publishScans: () => {}, settings: { trustProxy: 0, visitorHashKey: KEY }, answerMetrics: true, failed: () => {},
        }).then(() => undefined, (e: unknown) => e)
        expect(error).toBeInstanceOf(StartupError)
        expect((error as Error).message).toBe(`port ${taken.port} (SHORT_PORT) is already in use`)
        // Nothing of ours answers there.
        expect(await (await fetch(`http://127.0.0.1:${taken.port}/x`, { keepalive: false })).text()).toBe('other')
        await bus.close()
      } finally {
        taken.stop(true)
      }
    }
  })
})

describe('resolver thread modules', () => {
  it('loads no contracts index, TypeBox, pino, prom-client or driver: each thread keeps them out of its heap', async () => {
    const loaded = await modulesLoadedBy(join(import.meta.dir, '../../src/resolver/thread.ts'), join(import.meta.dir, '../..'))
    expect(loaded.some((path) => path.endsWith('resolver/thread.ts'))).toBe(true)
    expect(loaded.some((path) => path.endsWith('resolver/resolver.ts'))).toBe(true)
    expect(loaded.filter((path) => /typebox|pino|prom-client|elysia|nats|mongoose|proto\/src\/(?!app-error|codes|scan-batch)|platform\/src\/(?!log|request-context|request-url|tally|http-tallies|bots)/.test(path))).toEqual([])
  })
})

describe('RESOLVER_THREADS unset', () => {
  it('is one thread per usable CPU, none when only one is usable, 64 at most as the setting', () => {
    expect(defaultResolverThreads(16)).toBe(16)
    expect(defaultResolverThreads(2)).toBe(2)
    expect(defaultResolverThreads(1)).toBe(0)
    expect(defaultResolverThreads(256)).toBe(64)
  })

  it("follows this machine's usable CPUs", () => {
    const cpus = usableCpus()
    expect(defaultResolverThreads()).toBe(cpus > 1 ? cpus : 0)
  })
})
