import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type NatsServer, startNats } from './harness/nats'
import { freePort, freePortRun, waitUntil } from './harness/ports'
import { skipReason } from './harness/servers'

// `bun run start:nats` (deploy/local/start-all.ts): with HEALTH_PORT set, a probe port of its own
// for each process without an API; a process that ends while the others run stops them all.
const ROOT = join(import.meta.dir, '..')
/** The processes with probes, in the order start:nats gives them HEALTH_PORT, +1, +2... */
const PROBED = ['auth', 'records', 'dynamic', 'analytics', 'webhooks', 'resolver']

const healthy = (port: number) => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false)
const childPids = (pid: number) =>
  Bun.spawnSync(['pgrep', '-P', String(pid)]).stdout.toString().split('\n').filter(Boolean).map(Number)
const childPid = (pid: number, entry: string) => Number(Bun.spawnSync(['pgrep', '-P', String(pid), '-f', entry]).stdout.toString().trim())
const alive = (pid: number) => {
  try {
    return process.kill(pid, 0)
  } catch {
    return false
  }
}

const skip = skipReason('nats-server')
if (skip) describe.skip(`bun run start:nats (${skip})`, () => {})
else
  describe('bun run start:nats', () => {
    let nats: NatsServer
    let dataDir: string
    const spawned: number[] = []
    beforeAll(async () => {
      nats = await startNats({ jetstream: true })
      dataDir = mkdtempSync(join(tmpdir(), 'lr-start-all-'))
    })
    afterAll(async () => {
      for (const pid of spawned.filter(alive)) process.kill(pid, 'SIGKILL')
      await nats?.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    /** start:nats with HEALTH_PORT set; its children's pids are kept for the clean-up. */
    async function startAll(healthPort: number) {
      const port = await freePort()
      const env = { ...Bun.env, TRANSPORT: 'nats', NATS_URL: nats.url, DATA_DIR: dataDir, PORT: String(port), SHORT_PORT: String(await freePort()), HEALTH_PORT: String(healthPort), LOG_LEVEL: 'info' }
      const proc = Bun.spawn(['bun', 'run', join(ROOT, 'deploy/local/start-all.ts')], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
      spawned.push(proc.pid)
      const output = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()])
      // One that already ended (cannot start) needs no clean-up: wait for the others only so long.
      await waitUntil(() => childPids(proc.pid).length === 7 || proc.exitCode !== null, 10_000).catch(() => {})
      spawned.push(...childPids(proc.pid))
      return { proc, port, output }
    }

    it('gives each process without an API its own probe port, HEALTH_PORT on, in a fixed order; SIGTERM stops them all, exit 0', async () => {
      const healthPort = await freePortRun(PROBED.length)
      const { proc, port, output } = await startAll(healthPort)
      try {
        const ports = PROBED.map((_, i) => healthPort + i)
        await waitUntil(async () => (await Promise.all([port, ...ports].map(healthy))).every(Boolean), 30_000, 'every process to answer /healthz')
      } finally {
        proc.kill('SIGTERM')
      }
      expect(await proc.exited).toBe(0)
      const [stdout, stderr] = await output
      const healthPorts = Object.fromEntries(stdout.split('\n').filter((line) => line.includes('"health_port"')).map((line) => JSON.parse(line)).map((entry) => [entry.process, entry.health_port]))
      expect(healthPorts).toEqual(Object.fromEntries(PROBED.map((name, i) => [name, healthPort + i])))
      expect(stderr).not.toContain('[start:nats]')
    }, 60_000)

    it('stops the others and exits 1, naming the process and its exit code, when one ends while they run', async () => {
      const healthPort = await freePortRun(PROBED.length)
      const { proc, port, output } = await startAll(healthPort)
      try {
        await waitUntil(async () => (await Promise.all([port, healthPort + 1].map(healthy))).every(Boolean), 30_000, 'the gateway and records to answer /healthz')
        const records = childPid(proc.pid, 'services/records/src/main.ts')
        expect(records).toBeGreaterThan(0) // never 0: kill(0) would hit this test's own process group
        process.kill(records, 'SIGKILL')
        await Promise.race([proc.exited, Bun.sleep(20_000)])
      } finally {
        proc.kill('SIGTERM')
      }
      expect(await proc.exited).toBe(1)
      const [, stderr] = await output
      expect(stderr.split('\n').filter((line) => line.startsWith('[start:nats]'))).toEqual(['[start:nats] records exited with code 137: stopping the other processes'])
      expect(await healthy(port)).toBe(false)
      expect(spawned.filter(alive)).toEqual([])
    }, 60_000)

    it('stops the others and exits 1 when one cannot start (its probe port taken)', async () => {
      const healthPort = await freePortRun(PROBED.length)
      const taken = Bun.serve({ port: healthPort + 2, hostname: '0.0.0.0', fetch: () => new Response('taken') })
      try {
        const { proc, port, output } = await startAll(healthPort)
        await Promise.race([proc.exited, Bun.sleep(20_000)])
        proc.kill('SIGTERM')
        expect(await proc.exited).toBe(1)
        const lines = (await output)[1].split('\n')
        expect(lines).toContain(`[dynamic] cannot start: port ${healthPort + 2} (HEALTH_PORT) is already in use`)
        expect(lines.filter((line) => line.startsWith('[start:nats]'))).toEqual(['[start:nats] dynamic exited with code 1: stopping the other processes'])
        expect(await healthy(port)).toBe(false)
        expect(spawned.filter(alive)).toEqual([])
      } finally {
        taken.stop(true)
      }
    }, 60_000)
  })
