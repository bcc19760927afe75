import { afterAll, describe, expect, it } from 'bun:test'
import type { Subprocess } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DiscardPolicy, connect } from 'nats'
import { ENTRY_POINTS } from '../../deploy/entry-points'
import { scanBatchStreamConfig, SCAN_BATCH_STREAM } from '@lr/platform/scan-stream-config'
import { sample } from '../harness/metrics'
import { mongoSkipReason, startFerretDb } from '../harness/ferretdb'
import { startNats } from '../harness/nats'
import { freePort, waitForPort, waitUntil } from '../harness/ports'
import { stopProcess } from '../harness/stop-process'
import { skipReason } from '../harness/servers'
import { ROOT } from './manifests'

/** HEALTH_PORT on a real service process (runServiceProcess): what the kubelet's probes see. */
const skip = skipReason('nats-server')
const data = mkdtempSync(join(tmpdir(), 'lr-health-'))
afterAll(() => rmSync(data, { recursive: true, force: true }))

if (skip) describe.skip(`HEALTH_PORT of a service process (${skip})`, () => it('serves probes', () => {}))
else
  describe('HEALTH_PORT of a service process', () => {
    it('answers /healthz, and /readyz 200 while NATS answers, 503 naming NATS while it is gone, 200 again after', async () => {
      // With JetStream: without it records is ready all the same but lists it under degraded (below).
      const nats = await startNats({ jetstream: true })
      const port = await freePort()
      const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.records)], {
        cwd: ROOT,
        env: { ...Bun.env, TRANSPORT: 'nats', NATS_URL: nats.url, DATA_DIR: data, HEALTH_PORT: String(port) },
        stdout: 'ignore',
        stderr: 'ignore',
      })
      const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`)
      try {
        await waitUntil(async () => (await get('/healthz')).ok, 15_000, 'the probe listener')
        const ready = await get('/readyz')
        expect(ready.status).toBe(200)
        expect(await ready.json()).toEqual({ status: 'ready', checks: { store: true, nats: true }, degraded: [] })

        await nats.down()
        await waitUntil(async () => (await get('/readyz')).status === 503, 10_000, '/readyz to fail')
        expect(await (await get('/readyz')).json()).toEqual({ status: 'unavailable', checks: { store: true, nats: false }, degraded: [] })
        expect((await get('/healthz')).status).toBe(200)

        await nats.up()
        await waitUntil(async () => (await get('/readyz')).status === 200, 10_000, '/readyz to recover')
      } finally {
        proc.kill('SIGKILL')
        await proc.exited
        await nats.stop().catch(() => undefined)
      }
    }, 30_000)
  })

if (skip) describe.skip(`HEALTH_PORT of the resolver (${skip})`, () => it('stays ready without NATS', () => {}))
else
  describe('HEALTH_PORT of the resolver', () => {
    // The kubelet takes a pod whose /readyz fails out of its Service: every resolver at once when
    // the broker they share goes, although each still redirects the codes it has cached.
    it('stays ready while NATS is gone, listing it under degraded, and goes on answering short links', async () => {
      const nats = await startNats({ jetstream: true })
      const [port, shortPort] = [await freePort(), await freePort()]
      const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.resolver)], {
        cwd: ROOT,
        env: { ...Bun.env, TRANSPORT: 'nats', NATS_URL: nats.url, DATA_DIR: data, HEALTH_PORT: String(port), SHORT_PORT: String(shortPort), RESOLVER_THREADS: '0' },
        stdout: 'ignore',
        stderr: 'ignore',
      })
      const ready = async () => {
        const response = await fetch(`http://127.0.0.1:${port}/readyz`)
        return { code: response.status, body: (await response.json()) as { status: string; checks: object; degraded?: string[] } }
      }
      // What /readyz lists under degraded, in /metrics too: an alert cannot read /readyz's body.
      const degradedGauge = async () => {
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
        return ['nats', 'jetstream'].map((dependency) => sample(metrics, `lr_dependency_degraded{dependency="${dependency}"}`))
      }
      try {
        await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, 15_000, 'the resolver ready')
        expect(await ready()).toEqual({ code: 200, body: { status: 'ready', checks: { scans: true }, degraded: [] } })
        expect(await degradedGauge()).toEqual([0, 0])

        await nats.down()
        await waitUntil(async () => (await ready()).body.degraded?.includes('nats') === true, 10_000, 'NATS listed as degraded')
        expect(await ready()).toEqual({ code: 200, body: { status: 'ready', checks: { scans: true }, degraded: ['nats'] } })
        expect((await degradedGauge())[0]).toBe(1)
        const uncached = await fetch(`http://127.0.0.1:${shortPort}/Abcdefg1`, { redirect: 'manual' })
        expect([uncached.status, uncached.headers.get('retry-after')]).toEqual([503, '1'])

        await nats.up()
        await waitUntil(async () => (await ready()).body.degraded?.length === 0, 10_000, 'NATS back')
        expect(await degradedGauge()).toEqual([0, 0])
      } finally {
        proc.kill('SIGKILL')
        await proc.exited
        await nats.stop().catch(() => undefined)
      }
    }, 40_000)

    // A full stream store refuses every batch: the resolver goes on redirecting into its spool,
    // so it stays ready, and says so in /readyz and /metrics (it had said nothing).
    it('lists jetstream under degraded, and sets lr_jetstream_store_full, while SCAN_BATCHES refuses its scans for want of room', async () => {
      const nats = await startNats({ jetstream: true })
      const nc = await connect({ servers: nats.url })
      const jsm = await nc.jetstreamManager()
      await jsm.streams.add({ ...scanBatchStreamConfig(), max_bytes: 1, discard: DiscardPolicy.New })
      // Scans a resolver stopped before it sent them (a process that has ended: the spool adopts
      // no live process's files): this one sends them as it starts.
      const spoolDir = mkdtempSync(join(tmpdir(), 'lr-health-spool-'))
      const scan = (n: number) => ({ scan_id: `scan-${n}`, code: 'Code0001', scanned_at: 1_736_510_400_000 + n, user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE' })
      const write = `const s = (await import('@lr/platform/scan-spool')).openScanSpool(${JSON.stringify(spoolDir)}, { maxBytes: 1 << 20 }); for (const e of ${JSON.stringify([0, 1, 2, 3, 4].map(scan))}) s.append(e); s.close()`
      expect(await Bun.spawn(['bun', '-e', write], { cwd: ROOT, stdout: 'inherit', stderr: 'inherit' }).exited).toBe(0)
      const [port, shortPort] = [await freePort(), await freePort()]
      const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.resolver)], {
        cwd: ROOT,
        env: { ...Bun.env, TRANSPORT: 'nats', NATS_URL: nats.url, DATA_DIR: data, SCAN_SPOOL_DIR: spoolDir, HEALTH_PORT: String(port), SHORT_PORT: String(shortPort), RESOLVER_THREADS: '0' },
        stdout: 'ignore',
        stderr: 'ignore',
      })
      const ready = async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.json().catch(() => null) as Promise<{ status: string; degraded?: string[] } | null>
      const storeFull = async () => sample(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), `lr_jetstream_store_full{stream="${SCAN_BATCH_STREAM}"}`)
      try {
        await waitUntil(async () => (await ready())?.degraded?.includes('jetstream') === true, 15_000, 'jetstream listed as degraded')
        expect([(await ready())?.status, await storeFull()]).toEqual(['ready', 1])
        const { config } = await jsm.streams.info(SCAN_BATCH_STREAM)
        await jsm.streams.update(SCAN_BATCH_STREAM, { ...config, max_bytes: -1 })
        await waitUntil(async () => (await ready())?.degraded?.length === 0, 10_000, 'the scans taken')
        expect([await storeFull(), (await jsm.streams.info(SCAN_BATCH_STREAM)).state.messages > 0]).toEqual([0, true])
      } finally {
        proc.kill('SIGKILL')
        await proc.exited
        await nc.close()
        await nats.stop().catch(() => undefined)
        rmSync(spoolDir, { recursive: true, force: true })
      }
    }, 40_000)
  })

if (skip) describe.skip(`HEALTH_PORT without JetStream (${skip})`, () => it('lists jetstream under degraded', () => {}))
else
  describe('HEALTH_PORT while the NATS server has no JetStream', () => {
    // nats-server restarted without -js (its configuration lost the jetstream block) answers
    // every request but none on $JS.API: scans and record events wait, and every /readyz had
    // stayed 200 with nothing under degraded, the log the only trace.
    it('the resolver and a service process list jetstream under degraded, stay 200, and clear it once JetStream is back', async () => {
      const nats = await startNats({ jetstream: true })
      const [resolverPort, recordsPort, shortPort] = [await freePort(), await freePort(), await freePort()]
      const env = { ...Bun.env, TRANSPORT: 'nats', NATS_URL: nats.url, DATA_DIR: data, RESOLVER_THREADS: '0' }
      const procs = [
        Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.resolver)], { cwd: ROOT, env: { ...env, HEALTH_PORT: String(resolverPort), SHORT_PORT: String(shortPort) }, stdout: 'ignore', stderr: 'ignore' }),
        Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.records)], { cwd: ROOT, env: { ...env, HEALTH_PORT: String(recordsPort) }, stdout: 'ignore', stderr: 'ignore' }),
      ]
      const ready = async (port: number) => {
        const response = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null)
        return response && { code: response.status, ...((await response.json()) as { status: string; checks: object; degraded?: string[] }) }
      }
      const both = async () => [await ready(resolverPort), await ready(recordsPort)]
      let plain: Subprocess | undefined
      try {
        await waitUntil(async () => (await both()).every((answer) => answer?.code === 200), 15_000, 'both ready')
        await nats.down()
        plain = Bun.spawn(['nats-server', '-a', '127.0.0.1', '-p', String(nats.port)], { stdout: 'ignore', stderr: 'ignore' })
        await waitForPort(nats.port)
        await waitUntil(async () => (await both()).every((answer) => answer?.degraded?.includes('jetstream')), 15_000, 'jetstream listed as degraded')
        expect(await both()).toEqual([
          { code: 200, status: 'ready', checks: { scans: true }, degraded: ['jetstream'] },
          { code: 200, status: 'ready', checks: { store: true, nats: true }, degraded: ['jetstream'] },
        ])
        await stopProcess(plain)
        await nats.up()
        await waitUntil(async () => (await both()).every((answer) => answer?.code === 200 && answer.degraded?.length === 0), 15_000, 'jetstream back')
      } finally {
        for (const proc of procs) proc.kill('SIGKILL')
        await Promise.all(procs.map((proc) => proc.exited))
        if (plain) await stopProcess(plain)
        await nats.stop().catch(() => undefined)
      }
    }, 60_000)
  })

const mongoSkip = skip ?? mongoSkipReason()
if (mongoSkip) describe.skip(`HEALTH_PORT of a service process on MongoDB (${mongoSkip})`, () => it('serves the clock offset', () => {}))
else
  describe('HEALTH_PORT of a service process on MongoDB', () => {
    it('serves the offset of its clock from the database server\'s in /metrics', async () => {
      const [nats, mongo] = await Promise.all([startNats(), startFerretDb()])
      const port = await freePort()
      const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.records)], {
        cwd: ROOT,
        env: { ...Bun.env, TRANSPORT: 'nats', NATS_URL: nats.url, STORE: 'mongo', MONGODB_URL: `${mongo.url}library_records`, HEALTH_PORT: String(port) },
        stdout: 'ignore',
        stderr: 'ignore',
      })
      try {
        await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, 20_000, 'the records process ready')
        const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
        const line = metrics.split('\n').find((l) => l.startsWith('lr_database_clock_offset_seconds{store="mongodb"} '))
        expect(line).toBeDefined()
        // FerretDB runs on this machine, on this clock: the offset is the reading's error alone.
        expect(Math.abs(Number(line!.split(' ')[1]))).toBeLessThan(0.1)
      } finally {
        proc.kill('SIGKILL')
        await proc.exited
        await Promise.all([nats.stop(), mongo.stop()])
      }
    }, 40_000)
  })
