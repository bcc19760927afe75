import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ProcessName } from '../../deploy/entry-points'
import { type NatsServer, startNats } from '../harness/nats'
import { type RedisServer, startRedis } from '../harness/redis'
import { skipReason } from '../harness/servers'
import { type Replica, startReplica } from './fleet'
import { slowExport, startLoad } from './load'
import { ROOT } from './manifests'

/**
 * A rolling update of every process under load, the way deploy/k8s runs one: a second replica
 * starts and becomes ready; for the HTTP processes the Service drops the old endpoint and the
 * preStop sleep lets that reach the clients; then the old replica gets SIGTERM. No request may
 * fail (a request in flight at SIGTERM included), every old replica must exit 0 within the grace
 * period, and analytics must count exactly the scans that were redirected.
 */
const skip = skipReason('nats-server') ?? skipReason('redis-server')
const ROLL_ORDER: ProcessName[] = ['auth', 'records', 'dynamic', 'analytics', 'webhooks', 'resolver', 'gateway']
const HTTP = new Set<ProcessName>(['gateway', 'resolver'])
const GRACE_MS = 30_000
/** The manifests' preStop sleeps 5 s; on one machine the "endpoint removal" is immediate. */
const PRESTOP_MS = 100

let nats: NatsServer | undefined
let redis: RedisServer | undefined
const data = mkdtempSync(join(tmpdir(), 'lr-shutdown-'))
const running = new Map<ProcessName, Replica>()
afterAll(async () => {
  for (const replica of running.values()) replica.kill()
  await nats?.stop()
  await redis?.stop()
  rmSync(data, { recursive: true, force: true })
})

async function admin(env: Record<string, string>, ...argv: string[]) {
  const proc = Bun.spawn(['bun', 'run', join(ROOT, 'services/auth/src/cli/main.ts'), ...argv], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`admin ${argv.join(' ')} exited ${code}: ${stderr}`)
  return JSON.parse(stdout)
}

async function startDeployment(): Promise<Record<string, string>> {
  nats = await startNats({ jetstream: true })
  redis = await startRedis()
  const env: Record<string, string> = {
    ...(Bun.env as Record<string, string>),
    TRANSPORT: 'nats',
    NATS_URL: nats.url,
    LIMITER: 'redis',
    REDIS_URL: redis.url,
    DATA_DIR: data,
    SHORT_BASE_URL: 'http://short.test',
    ...Object.fromEntries(['PERSONAL', 'BUSINESS'].flatMap((k) => ['DAILY', 'PER_SECOND', 'BURST'].map((w) => [`LIMIT_${k}_${w}`, '1000000']))),
  }
  for (const name of ROLL_ORDER) running.set(name, await startReplica(name, env))
  await Promise.all([...running.values()].map((replica) => replica.ready()))
  return env
}

async function createCodes(key: string, count: number): Promise<string[]> {
  const codes: string[] = []
  for (let n = 0; n < count; n++) {
    const response = await fetch(`${running.get('gateway')!.base}/v1/dynqrcodes`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ destination_url: `https://example.com/${n}`, name: `Code ${n}` }),
    })
    if (response.status !== 201) throw new Error(`creating a code answered ${response.status}: ${await response.text()}`)
    codes.push(((await response.json()) as { created: { code: string }[] }).created[0]!.code)
  }
  return codes
}

/** Total scans per code, once analytics has caught up with `sent` (or after 10 s). */
async function countedScans(key: string, sent: Record<string, number>): Promise<Record<string, number>> {
  let counted: Record<string, number> = {}
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const response = await fetch(`${running.get('gateway')!.base}/v1/dynqrcodes/analytics`, { headers: { 'x-api-key': key } })
    const body = (await response.json()) as { analytics: { code: string; total_scans: number }[] }
    counted = Object.fromEntries(body.analytics.map((row) => [row.code, row.total_scans]))
    if (Object.keys(sent).every((code) => counted[code] === sent[code])) break
    await Bun.sleep(200)
  }
  return counted
}

if (skip) describe.skip(`graceful shutdown under load (${skip})`, () => it('rolls every process', () => {}))
else
  describe('graceful shutdown under load (NATS mode, real nats-server and redis-server)', () => {
    it('replaces every process while requests and scans flow: none fails, none is lost, each exits 0 in time', async () => {
      const env = await startDeployment()
      const { account_id } = await admin(env, 'account', 'create', '--email', 'load@example.test', '--tier', 'pro')
      const { key } = await admin(env, 'key', 'create', '--account', account_id, '--scope', 'personal')
      const codes = await createCodes(key, 3)

      const load = startLoad({ api: () => running.get('gateway')!.base, short: () => running.get('resolver')!.base }, key, codes)
      const exits: Record<string, { code: number; ms: number }> = {}
      let exported: Awaited<ReturnType<typeof slowExport>> | undefined
      let gatewaySigterm = 0
      try {
        await Bun.sleep(300)
        for (const name of ROLL_ORDER) {
          const old = running.get(name)!
          const next = await startReplica(name, env)
          await next.ready()
          const sigterm = Promise.withResolvers<void>()
          const inFlight = name === 'gateway' ? slowExport(old.base, key, sigterm.promise) : undefined
          running.set(name, next) // the Service's endpoints: new requests go to the new replica
          if (HTTP.has(name)) await Bun.sleep(PRESTOP_MS)
          if (name === 'gateway') gatewaySigterm = performance.now()
          const exited = old.terminate()
          sigterm.resolve()
          exits[name] = await exited
          exported = (await inFlight) ?? exported
        }
        await Bun.sleep(200)
      } finally {
        await load.stop()
      }

      expect(load.failures.slice(0, 10)).toEqual([])
      expect(load.requests()).toBeGreaterThan(200)
      for (const name of ROLL_ORDER) expect({ name, ...exits[name]!, inGrace: exits[name]!.ms < GRACE_MS }).toEqual({ name, code: 0, ms: exits[name]!.ms, inGrace: true })
      // The export was still streaming when its gateway got SIGTERM, and finished whole.
      expect(exported!.status).toBe(200)
      expect(exported!.finishedAt).toBeGreaterThan(gatewaySigterm)

      const sent = Object.fromEntries(load.scans)
      expect(await countedScans(key, sent)).toEqual(sent)
      expect(Object.values(sent).reduce((a, b) => a + b, 0)).toBeGreaterThan(100)
    }, 60_000)
  })
