import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { Subprocess } from 'bun'
import { ENTRY_POINTS, type ProcessName } from '../../deploy/entry-points'
import { type NatsServer, startNats } from '../harness/nats'
import { freePort, waitUntil } from '../harness/ports'
import { skipReason } from '../harness/servers'
import { imageUser, stageImage } from './dockerfile'

/**
 * The image without Docker: what deploy/Dockerfile copies (minus .dockerignore) is staged in a
 * temporary /app, its production dependencies installed as the Dockerfile does, and every process
 * started from it the way the manifests start it (`deploy/entry.ts <process>`, probes, SIGTERM).
 * As in a pod, /app cannot be written: its files are made read-only, and a test run as root runs
 * the processes as the image's user (USER), for whom root's files are read-only whatever their mode.
 */
const skip = skipReason('nats-server')
const PROCESSES = Object.keys(ENTRY_POINTS) as ProcessName[]
const asImageUser = process.getuid?.() === 0 ? await imageUser() : {}
const chmodAll = (mode: string, dir: string) => Bun.spawnSync(['chmod', '-R', mode, dir])

let app: string
let data: string
let nats: NatsServer

beforeAll(async () => {
  if (skip) return
  app = mkdtempSync(join(tmpdir(), 'lr-image-'))
  data = mkdtempSync(join(tmpdir(), 'lr-image-data-'))
  // Stage by stage, as `docker build` would: the dependencies installed in the first stage from
  // the manifests alone, then only what the last stage copies from it.
  await stageImage(app)
  chmodAll('a+rX,a-w', app)
  // The pods' writable volumes (DATA_DIR of records and dynamic, the resolver's spool), the image's user's.
  chmodAll('a+rwx', data)
  nats = await startNats({ jetstream: true })
}, 60_000)

afterAll(async () => {
  if (skip) return
  await nats?.stop()
  chmodAll('u+w', app)
  rmSync(app, { recursive: true, force: true })
  rmSync(data, { recursive: true, force: true })
})

/** The TypeScript sources of the staged image (relative to it), outside node_modules. */
const sourcesOf = (dir: string) =>
  (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && !f.split('/').includes('node_modules'))

/** The environment of a pod of the image, as the Dockerfile and the manifests give it. */
const podEnv = (ports: Record<string, number>) => ({
  PATH: Bun.env.PATH!,
  HOME: app,
  NODE_ENV: 'production',
  BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0',
  TRANSPORT: 'nats',
  NATS_URL: nats.url,
  DATA_DIR: data,
  ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
})

/** Starts one process from the staged image with the manifests' kind of environment. */
async function startFromImage(name: ProcessName) {
  const ports = { PORT: await freePort(), SHORT_PORT: await freePort(), HEALTH_PORT: await freePort() }
  let log = ''
  const proc: Subprocess = Bun.spawn(['bun', 'run', 'deploy/entry.ts', name], {
    ...asImageUser,
    cwd: app,
    env: podEnv(ports),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  for (const stream of [proc.stdout, proc.stderr] as ReadableStream<Uint8Array>[])
    void (async () => {
      for await (const chunk of stream) log += new TextDecoder().decode(chunk)
    })()
  return { name, proc, ports, log: () => log }
}

if (skip) describe.skip(`the image, staged without Docker (${skip})`, () => it('runs every process', () => {}))
else
  describe('the image, staged without Docker', () => {
    it('holds neither tests, local data nor development dependencies', () => {
      expect(existsSync(join(app, 'test'))).toBe(false)
      expect(existsSync(join(app, 'node_modules/typescript'))).toBe(false)
      const files = readdirSync(app, { recursive: true }) as string[]
      expect(files.filter((f) => /(^|\/)test\/|\.test\.ts$|\.sqlite$/.test(f) && !f.split('/').includes('node_modules'))).toEqual([])
    })

    // A process loads some modules only on a path the test below does not take (STORE=mongo,
    // LIMITER=redis): every package any source imports must resolve from where it lies in /app.
    it('resolves every package the sources import from the dependencies the image holds', () => {
      const transpiler = new Bun.Transpiler({ loader: 'ts' })
      const unresolved: string[] = []
      for (const file of sourcesOf(app)) {
        for (const { path } of transpiler.scanImports(readFileSync(join(app, file), 'utf8'))) {
          if (path.startsWith('.') || /^(node|bun):/.test(path)) continue
          try {
            Bun.resolveSync(path, dirname(join(app, file)))
          } catch {
            unresolved.push(`${file}: ${path}`)
          }
        }
      }
      expect(unresolved).toEqual([])
    })

    it('runs every process from its argument, ready on its probe port, and exits 0 on SIGTERM', async () => {
      const running = await Promise.all(PROCESSES.map(startFromImage))
      try {
        for (const p of running) {
          const ready = p.name === 'gateway' ? `http://127.0.0.1:${p.ports.PORT}/readyz` : `http://127.0.0.1:${p.ports.HEALTH_PORT}/readyz`
          await waitUntil(async () => (await fetch(ready)).status === 200, 20_000, `${p.name} to be ready`).catch((error) => {
            throw new Error(`${error.message}\n${p.log()}`)
          })
        }
        for (const p of running) p.proc.kill('SIGTERM')
        const codes = await Promise.all(running.map((p) => p.proc.exited))
        expect(Object.fromEntries(running.map((p, i) => [p.name, codes[i]]))).toEqual(Object.fromEntries(PROCESSES.map((n) => [n, 0])))
      } finally {
        for (const p of running) p.proc.kill('SIGKILL')
      }
    }, 40_000)

    // deploy/README.md, "Issue the first key": `kubectl exec deploy/auth -- bun run --silent admin ...`
    // runs in the auth pod's working directory and environment, and reaches the auth service over NATS.
    it('issues the first key from inside the auth pod with bun run --silent admin', async () => {
      const auth = await startFromImage('auth')
      const exec = async (...args: string[]) => {
        const proc = Bun.spawn(['bun', 'run', '--silent', 'admin', ...args], { ...asImageUser, cwd: app, env: podEnv(auth.ports), stdout: 'pipe', stderr: 'pipe' })
        const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
        return { code, stdout, stderr }
      }
      try {
        await waitUntil(async () => (await fetch(`http://127.0.0.1:${auth.ports.HEALTH_PORT}/readyz`)).status === 200, 20_000, 'auth to be ready')
        const account = await exec('account', 'create', '--email', 'ops@example.com', '--tier', 'pro')
        expect([account.code, account.stderr]).toEqual([0, ''])
        const { account_id } = JSON.parse(account.stdout)
        const key = await exec('key', 'create', '--account', account_id, '--scope', 'personal', '--name', 'first key')
        expect([key.code, key.stderr, JSON.parse(key.stdout)]).toEqual([0, '', expect.objectContaining({ key: expect.stringMatching(/^lrp_/), name: 'first key' })])
        expect((await exec('account', 'show', '--email', 'ops@example.com')).stdout).toBe(account.stdout)
      } finally {
        auth.proc.kill('SIGKILL')
      }
    }, 40_000)
  })
