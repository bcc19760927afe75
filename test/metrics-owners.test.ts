import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { ENTRY_POINTS } from '../deploy/entry-points'
import { sample } from './harness/metrics'
import { startNats, type NatsServer } from './harness/nats'
import { freePort, waitUntil } from './harness/ports'
import { skipReason } from './harness/servers'
import { type Stack, startInProcessStack } from './harness/stack'

// A series that means something only in some processes is listed by those alone: auth had listed
// the resolver's scans and webhooks' deliveries at 0 (platform/src/metrics.ts, reportMetrics).
const ROOT = join(import.meta.dir, '..')
const SCANS = ['lr_scans_published_total', 'lr_scans_buffered', 'lr_scans_dropped_total', 'lr_scans_lost_total']
const WEBHOOKS = ['lr_webhook_deliveries_given_up_total', 'lr_webhook_endpoints_disabled_total']
/** Every family a /metrics text lists (its `# TYPE` lines), samples or none. */
const families = (metrics: string) => [...metrics.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]!)

const skip = skipReason('nats-server')
if (skip) describe.skip(`the series each process lists (${skip})`, () => {})
else
  describe('the series each process lists, over NATS', () => {
    let nats: NatsServer
    let dataDir: string
    const procs: Subprocess[] = []
    /** The /metrics of one process started with a probe listener. */
    const metricsOf = async (name: keyof typeof ENTRY_POINTS) => {
      const port = await freePort()
      const env = { ...(Bun.env as Record<string, string>), TRANSPORT: 'nats', NATS_URL: nats.url, DATA_DIR: dataDir, HEALTH_PORT: String(port), SHORT_PORT: String(await freePort()), SHORT_BASE_URL: 'http://short.test' }
      procs.push(Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS[name])], { cwd: ROOT, env, stdout: 'ignore', stderr: 'ignore' }))
      // Ready: its parts have started, and registered what they report.
      const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`).catch(() => null)
      await waitUntil(async () => (await get('/readyz'))?.status === 200, 15_000, `${name} to be ready`)
      return (await get('/metrics'))!.text()
    }
    beforeAll(async () => {
      nats = await startNats({ jetstream: true })
      dataDir = mkdtempSync(join(tmpdir(), 'lr-owners-'))
    })
    afterAll(async () => {
      for (const proc of procs) proc.kill('SIGTERM')
      await Promise.all(procs.map((proc) => proc.exited))
      await nats?.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    it("lists neither the resolver's scans nor webhooks' deliveries on auth's probe listener", async () => {
      const listed = families(await metricsOf('auth'))
      expect(listed.filter((family) => [...SCANS, ...WEBHOOKS, 'lr_bus_events_unsettled_total'].includes(family))).toEqual([])
      expect(listed).toContain('lr_bus_handler_duration_seconds')
    }, 30_000)

    it("lists the resolver's scan series at 0 on its own, and not webhooks'", async () => {
      const metrics = await metricsOf('resolver')
      expect(SCANS.map((series) => sample(metrics, series))).toEqual([0, 0, 0, 0])
      expect(families(metrics).filter((family) => WEBHOOKS.includes(family))).toEqual([])
    }, 30_000)

    it("lists webhooks' delivery series at 0 on its own, and not the resolver's", async () => {
      const metrics = await metricsOf('webhooks')
      expect(WEBHOOKS.map((series) => sample(metrics, series))).toEqual([0, 0])
      expect(families(metrics).filter((family) => SCANS.includes(family))).toEqual([])
    }, 30_000)
  })

describe('the series bun start lists, in one registry', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startInProcessStack()
  })
  afterAll(() => stack?.stop())

  it("lists the scans it published and webhooks' deliveries, each part's own", async () => {
    const metrics = await (await stack.request('/metrics')).text()
    expect(['lr_scans_published_total', ...WEBHOOKS].map((series) => sample(metrics, series) !== undefined)).toEqual([true, true, true])
  })
})
