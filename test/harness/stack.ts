import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Bus, loadConfig, type LogLevel } from '@lr/proto'
import { createLogger, installLogger } from '@lr/platform/log'
import { createNatsBus } from '@lr/platform/bus-nats'
import { startStandalone } from '@lr/standalone'
import { ENTRY_POINTS, type ProcessName, servingCount, spawnProcesses } from '../../deploy/local/processes'
import { startNats } from './nats'
import { freePort, waitUntil } from './ports'

const ROOT = join(import.meta.dir, '..', '..')
const PROCESS_NAMES = Object.keys(ENTRY_POINTS)

/** A running product, however it is deployed, as the API suite sees it. */
export interface Stack {
  mode: 'in-process' | 'nats'
  env: Record<string, string>
  request(path: string, init?: RequestInit): Promise<Response>
  /** One request to the short-link resolver (`path` as in a short_url); redirects are not followed. */
  short(path: string, init?: RequestInit): Promise<Response>
  /** A client of the deployment's bus, for tests that watch events (e.g. scans.*). */
  bus: Bus
  /** NATS deployment only: stops one process (SIGTERM, as an orchestrator would). */
  stopProcess?(name: ProcessName): Promise<void>
  /** NATS deployment only: starts a stopped process again; resolves once it serves. */
  startProcess?(name: ProcessName): Promise<void>
  /** NATS deployment only: kills one process at once (SIGKILL, a crash); startProcess brings it back. */
  killProcess?(name: ProcessName): Promise<void>
  /** Runs the real admin command line against this deployment; resolves with its JSON. */
  admin(...argv: string[]): Promise<any>
  /** Runs an admin command that must fail; resolves with its error message. */
  adminFails(...argv: string[]): Promise<string>
  /** NATS deployment only: everything its processes wrote so far, each chunk tagged `[name] `. */
  output?(): string
  stop(): Promise<void>
}

async function runAdmin(env: Record<string, string>, argv: string[]) {
  const proc = Bun.spawn(['bun', 'run', join(ROOT, 'services/auth/src/cli/main.ts'), ...argv], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

export function adminOf(env: Record<string, string>) {
  return {
    async admin(...argv: string[]) {
      const { stdout, stderr, code } = await runAdmin(env, argv)
      if (code !== 0) throw new Error(`admin ${argv.join(' ')} exited ${code}: ${stderr}`)
      return JSON.parse(stdout)
    },
    async adminFails(...argv: string[]) {
      const { stdout, stderr, code } = await runAdmin(env, argv)
      if (code !== 1) throw new Error(`admin ${argv.join(' ')} should fail, exited ${code}: ${stdout}`)
      return JSON.parse(stderr.trim().split('\n').at(-1)!).error as string
    },
  }
}

const baseEnv = (extra: Record<string, string>) => ({
  ...(Bun.env as Record<string, string>),
  DATA_DIR: mkdtempSync(join(tmpdir(), 'lr-data-')),
  SHORT_BASE_URL: 'http://short.test',
  // Functional suites send many requests per key; the rate-limit suite sets its own small limits.
  ...Object.fromEntries(['PERSONAL', 'BUSINESS'].flatMap((kind) => ['DAILY', 'PER_SECOND', 'BURST'].map((what) => [`LIMIT_${kind}_${what}`, '1000000']))),
  ...extra,
})

/** The whole product in this process; requests go through `gateway.handle`, no socket. */
export async function startInProcessStack(extra: Record<string, string> = {}): Promise<Stack> {
  const env = baseEnv({ TRANSPORT: 'memory', ...extra })
  // As `bun start` would; warn by default, so the suites' thousands of access lines stay out of test output.
  installLogger(createLogger('standalone', ((env as Record<string, string>).LOG_LEVEL as LogLevel | undefined) ?? 'warn'))
  const product = await startStandalone(loadConfig(env))
  return {
    mode: 'in-process',
    env,
    request: (path, init) => product.gateway.handle(new Request(`http://localhost${path}`, init)),
    short: async (path, init) => product.resolver.fetch(new Request(`http://short.test${path}`, init)),
    bus: product.bus,
    ...adminOf(env),
    async stop() {
      await product.stop()
      rmSync(env.DATA_DIR!, { recursive: true, force: true })
    },
  }
}

/** Every service as its own process over a private nats-server; requests go over HTTP. */
export async function startNatsStack(extra: Record<string, string> = {}): Promise<Stack> {
  const nats = await startNats({ jetstream: true })
  const port = await freePort()
  const shortPort = await freePort()
  const env = baseEnv({ TRANSPORT: 'nats', NATS_URL: nats.url, PORT: String(port), SHORT_PORT: String(shortPort), ...extra })
  const group = spawnProcesses(env)
  const base = `http://127.0.0.1:${port}`
  try {
    // Every process logs one line once it serves (services: "serving on", gateway: "API on").
    const started = (name: string) => servingCount(group.output(), name as ProcessName) > 0
    await waitUntil(() => PROCESS_NAMES.every(started), 20_000, 'every process of the NATS deployment')
  } catch (error) {
    await group.stop()
    await nats.stop()
    throw new Error(`${(error as Error).message}\n${group.output()}`)
  }
  const bus = await createNatsBus(nats.url, 'test-observer')
  return {
    mode: 'nats',
    env,
    request: (path, init) => fetch(`${base}${path}`, init),
    short: (path, init) => fetch(`http://127.0.0.1:${shortPort}${path}`, { redirect: 'manual', ...init }),
    bus,
    stopProcess: (name) => group.stop(name),
    async killProcess(name) {
      const pid = group.pid(name)
      if (pid !== undefined) process.kill(pid, 'SIGKILL')
      await waitUntil(() => { try { process.kill(pid!, 0); return false } catch { return true } }, 5000, `${name} to die`)
    },
    output: () => group.output(),
    async startProcess(name) {
      const servings = () => servingCount(group.output(), name)
      const before = servings()
      group.start(name)
      await waitUntil(() => servings() > before, 20_000, `${name} to serve again`)
    },
    ...adminOf(env),
    async stop() {
      await bus.close()
      await group.stop()
      await nats.stop()
      rmSync(env.DATA_DIR!, { recursive: true, force: true })
    },
  }
}

/** Another gateway process of a NATS deployment, on its own port (shared-limit tests), with settings of its own when given. */
export async function spawnExtraGateway(stack: Stack, extra: Record<string, string> = {}) {
  const port = await freePort()
  const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.gateway)], { cwd: ROOT, env: { ...stack.env, ...extra, PORT: String(port) }, stdout: 'ignore', stderr: 'inherit' })
  const base = `http://127.0.0.1:${port}`
  await waitUntil(async () => (await fetch(`${base}/healthz`)).ok, 15_000, 'the second gateway')
  return {
    request: (path: string, init?: RequestInit) => fetch(`${base}${path}`, init),
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
    },
  }
}

/** Another resolver process of a NATS deployment, on its own SHORT_PORT (for cache-invalidation tests), with settings of its own when given. */
export async function spawnExtraResolver(stack: Stack, extra: Record<string, string> = {}) {
  const port = await freePort()
  const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS.resolver)], { cwd: ROOT, env: { ...stack.env, ...extra, SHORT_PORT: String(port) }, stdout: 'ignore', stderr: 'inherit' })
  const base = `http://127.0.0.1:${port}`
  await waitUntil(async () => (await fetch(`${base}/`)).status === 404, 15_000, 'the second resolver')
  return {
    short: (path: string, init?: RequestInit) => fetch(`${base}${path}`, { redirect: 'manual', ...init }),
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
    },
  }
}
