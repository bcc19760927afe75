import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ENTRY_POINTS, type ProcessName, servingCount, spawnProcesses } from '../deploy/local/processes'
import { startNats, type NatsServer } from '../test/harness/nats'
import { freePort, waitUntil } from '../test/harness/ports'
import { type Child, ROOT, runToEnd, spawnChild, waitForHttp } from './procs'

/**
 * The limiter is part of every authenticated request, but its limits (docs/decisions.md §1: 5/s per key)
 * would turn a throughput run into a 429 run. They are set far beyond what a run can use, so the
 * limiter still does all its work (GCRA, headers) and admits everything.
 */
export const UNLIMITED: Record<string, string> = Object.fromEntries(
  ['PERSONAL', 'BUSINESS'].flatMap((kind) => ['DAILY', 'PER_SECOND', 'BURST'].map((what) => [`LIMIT_${kind}_${what}`, '1000000000'])),
)

/** A running deployment as the bench drives it: base URLs, the admin command line, its processes. */
export interface Product {
  mode: 'one process' | 'nats'
  env: Record<string, string>
  api: string
  short: string
  /** The gateway's process (in one-process mode: the whole product). */
  gatewayPid?: number
  nats?: NatsServer
  /** The resolver's process, when it runs as its own (NATS deployment). */
  resolverPid?: number
  admin(...argv: string[]): Promise<any>
  stop(): Promise<void>
  output(): string
}

const baseEnv = async (dataDir?: string) => {
  const port = await freePort()
  const shortPort = await freePort()
  return {
    ...(Bun.env as Record<string, string>),
    DATA_DIR: dataDir ?? mkdtempSync(join(tmpdir(), 'lr-bench-data-')),
    PORT: String(port),
    SHORT_PORT: String(shortPort),
    SHORT_BASE_URL: `http://127.0.0.1:${shortPort}`,
    ...UNLIMITED,
  }
}

const adminWith = (env: Record<string, string>) => async (...argv: string[]) => {
  const { stdout } = await runToEnd(['bun', 'run', join(ROOT, 'services/auth/src/cli/main.ts'), ...argv], env)
  return JSON.parse(stdout)
}

/**
 * BENCH_PROFILE=<dir>: the one-process product runs under Bun's sampling profiler and writes a
 * .cpuprofile and a Markdown summary into <dir> when it stops (for the analysis, not the figures).
 */
const profileFlags = (name: string) =>
  Bun.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${Bun.env.BENCH_PROFILE}`, `--cpu-prof-name=${name}-${Date.now()}.`] : []

/** A fresh DATA_DIR (for seeding before the product starts). */
export const newDataDir = () => mkdtempSync(join(tmpdir(), 'lr-bench-data-'))

/** `bun run standalone/src/main.ts`: the whole product in one process (what `bun start` runs). */
export async function startOneProcess(dataDir?: string): Promise<Product> {
  // A DATA_DIR given by the caller is the caller's to remove.
  // The access log (one line per API request at info) is left out, as in the runs before it
  // existed, so figures compare; BENCH_LOG_LEVEL=info measures with it.
  const env = { ...(await baseEnv(dataDir)), TRANSPORT: 'memory', LOG_LEVEL: Bun.env.BENCH_LOG_LEVEL ?? 'warn' }
  const child = spawnChild('product', ['bun', ...profileFlags('one-process'), 'run', join(ROOT, 'standalone/src/main.ts')], env)
  const api = `http://127.0.0.1:${env.PORT}`
  const short = `http://127.0.0.1:${env.SHORT_PORT}`
  try {
    await waitForHttp(`${api}/healthz`, child, 'the one-process product', 200)
    await waitForHttp(`${short}/`, child, 'the short-link listener', 404)
  } catch (error) {
    await child.stop()
    throw error
  }
  return {
    mode: 'one process',
    env,
    api,
    short,
    gatewayPid: child.pid,
    admin: adminWith(env),
    output: child.output,
    async stop() {
      await child.stop()
      if (!dataDir) rmSync(env.DATA_DIR, { recursive: true, force: true })
    },
  }
}

/** Every process of TRANSPORT=nats mode (deploy/local/processes.ts) over a private JetStream nats-server. */
export async function startNatsProduct(dataDir?: string): Promise<Product> {
  const nats = await startNats({ jetstream: true })
  // Scenario 8 spools every scan of a 60 s outage on disk, about 340 bytes each: at this kind of
  // machine's rate (53k/s) 3.4M scans, 1.1 GB, over SCAN_SPOOL_MAX_MB's 1 GiB default, beyond
  // which a resolver drops scans by design (README). The bound is raised so the scenario measures
  // the hand-over, not the operator's setting; its row reports any drop.
  const env = { ...(await baseEnv(dataDir)), TRANSPORT: 'nats', NATS_URL: nats.url, SCAN_SPOOL_MAX_MB: '4096' }
  // The gateway without its access log (as above); the services log their start at info.
  const group = spawnProcesses(env, undefined, { envOf: (name): Record<string, string> => (name === 'gateway' ? { LOG_LEVEL: Bun.env.BENCH_LOG_LEVEL ?? 'warn' } : {}) })
  // The gateway says it serves at info, which it does not write here: /healthz below tells.
  const names = Object.keys(ENTRY_POINTS).filter((name) => name !== 'gateway')
  const api = `http://127.0.0.1:${env.PORT}`
  const short = `http://127.0.0.1:${env.SHORT_PORT}`
  try {
    const started = (name: string) => servingCount(group.output(), name as ProcessName) > 0
    await waitUntil(() => names.every(started), 30_000, `every process of the NATS deployment (${names.join(', ')})`)
    await waitForHttp(`${api}/healthz`, undefined, 'the NATS gateway', 200)
  } catch (error) {
    await group.stop()
    await nats.stop()
    throw new Error(`${(error as Error).message}\n${group.output()}`)
  }
  return {
    mode: 'nats',
    env,
    api,
    short,
    nats,
    resolverPid: group.pid('resolver'),
    admin: adminWith(env),
    output: group.output,
    async stop() {
      await group.stop()
      await nats.stop()
      if (!dataDir) rmSync(env.DATA_DIR, { recursive: true, force: true })
    },
  }
}

/** A Pro account with a personal key, made with the real admin command line. */
export async function member(product: Pick<Product, 'admin'>, who = 'bench') {
  const { account_id } = await product.admin('account', 'create', '--email', `${who}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@bench.test`, '--tier', 'pro')
  const { key } = await product.admin('key', 'create', '--account', account_id, '--scope', 'personal')
  return { account_id: account_id as string, key: key as string, library: `acct:${account_id}` }
}

/** One JSON API call with a key; throws unless the status is the expected one. */
export async function api(product: Product, key: string, method: string, path: string, body?: unknown, expect = method === 'POST' ? 201 : 200) {
  const response = await fetch(`${product.api}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  if (response.status !== expect) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`)
  return { text, json: JSON.parse(text) }
}

export type { Child }

/** The admin command line on a DATA_DIR before any product runs there (TRANSPORT=memory opens the store itself). */
export const adminIn = (dataDir: string) => adminWith({ ...(Bun.env as Record<string, string>), TRANSPORT: 'memory', DATA_DIR: dataDir })
