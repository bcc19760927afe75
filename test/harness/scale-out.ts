import type { Subprocess } from 'bun'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createNatsBus } from '@lr/platform/bus-nats'
import { ENTRY_POINTS, type ProcessName } from '../../deploy/entry-points'
import { servingCount } from '../../deploy/local/processes'
import { startNats } from './nats'
import { freePort, waitUntil } from './ports'
import { startRedis } from './redis'
import { adminOf, type Stack } from './stack'

const ROOT = join(import.meta.dir, '..', '..')
/** The production shape of deploy/k8s: two of every process. */
export const REPLICAS = 2

/** A replica of one process: `records#1` is the second records process. */
export interface Replica {
  name: ProcessName
  index: number
  proc: Subprocess
}

/** The scale-out deployment: the API suite's Stack, plus per-replica control for fault tests. */
export interface ScaleOutStack extends Stack {
  replicas(name: ProcessName): Replica[]
  /** kill -9 one replica (no shutdown of any kind) and wait until it is gone. */
  kill(name: ProcessName, index: number): Promise<void>
  /** Starts a killed or stopped replica again; resolves once it serves. */
  revive(name: ProcessName, index: number): Promise<void>
  /** Each gateway on its own, to check both serve. */
  gateways: string[]
}


/**
 * TRANSPORT=nats STORE=mongo LIMITER=redis with two replicas of auth, records, dynamic and
 * analytics, two gateways and two resolvers, as deploy/k8s runs them. Requests alternate between
 * the gateways and short links between the resolvers, so every suite crosses replicas.
 * `mongoUrl` names a server; each stack gets a database of its own on it.
 */
export async function startScaleOutStack(mongoUrl: string, extra: Record<string, string> = {}): Promise<ScaleOutStack> {
  const nats = await startNats({ jetstream: true })
  const redis = await startRedis()
  const database = `lr_scale_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  const url = new URL(mongoUrl)
  url.pathname = `/${database}`
  const env: Record<string, string> = {
    ...(Bun.env as Record<string, string>),
    DATA_DIR: mkdtempSync(join(tmpdir(), 'lr-scale-')),
    SHORT_BASE_URL: 'http://short.test',
    ...Object.fromEntries(['PERSONAL', 'BUSINESS'].flatMap((kind) => ['DAILY', 'PER_SECOND', 'BURST'].map((what) => [`LIMIT_${kind}_${what}`, '1000000']))),
    TRANSPORT: 'nats',
    NATS_URL: nats.url,
    STORE: 'mongo',
    MONGODB_URL: url.href,
    LIMITER: 'redis',
    REDIS_URL: redis.url,
    // One cursor key for every replica, as the manifests give them (the Secret).
    CURSOR_SECRET: 'scale-out-test-cursor-secret',
    ...extra,
  }
  const gatewayPorts = await Promise.all(Array.from({ length: REPLICAS }, freePort))
  const resolverPorts = await Promise.all(Array.from({ length: REPLICAS }, freePort))
  const running = new Map<string, Replica>()
  const lines: string[] = []
  const keyOf = (name: ProcessName, index: number) => `${name}#${index}`

  async function collect(tag: string, stream: ReadableStream<Uint8Array>) {
    const decoder = new TextDecoder()
    for await (const chunk of stream) for (const line of decoder.decode(chunk).split('\n')) if (line) lines.push(`[${tag}] ${line}`)
  }

  function spawn(name: ProcessName, index: number): Replica {
    const portEnv = name === 'gateway' ? { PORT: String(gatewayPorts[index]) } : name === 'resolver' ? { SHORT_PORT: String(resolverPorts[index]) } : {}
    const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS[name])], { cwd: ROOT, env: { ...env, ...portEnv }, stdout: 'pipe', stderr: 'pipe' })
    const tag = keyOf(name, index)
    void collect(tag, proc.stdout as ReadableStream<Uint8Array>)
    void collect(tag, proc.stderr as ReadableStream<Uint8Array>)
    const replica = { name, index, proc }
    running.set(tag, replica)
    return replica
  }

  const servingOf = (name: ProcessName, index: number) => servingCount(lines.filter((l) => l.startsWith(`[${keyOf(name, index)}] `)).join('\n'), name)
  async function startReplica(name: ProcessName, index: number) {
    const before = servingOf(name, index)
    const { proc } = spawn(name, index)
    const exited = proc.exited.then((code) => {
      throw new Error(`${keyOf(name, index)} exited with code ${code} before it served`)
    })
    await Promise.race([waitUntil(() => servingOf(name, index) > before, 30_000, `${keyOf(name, index)} to serve`), exited]).catch((error) => {
      throw new Error(`${(error as Error).message}\n${lines.filter((l) => l.startsWith(`[${keyOf(name, index)}] `)).slice(-20).join('\n')}`)
    })
    exited.catch(() => undefined)
  }
  async function stopReplica(name: ProcessName, index: number, signal: 'SIGTERM' | 'SIGKILL') {
    const replica = running.get(keyOf(name, index))
    if (!replica) return
    running.delete(keyOf(name, index))
    replica.proc.kill(signal)
    const exited = await Promise.race([replica.proc.exited, Bun.sleep(10_000).then(() => 'timeout' as const)])
    if (exited === 'timeout') {
      replica.proc.kill('SIGKILL')
      await replica.proc.exited
    }
  }

  const names = Object.keys(ENTRY_POINTS) as ProcessName[]
  try {
    // Services before gateways and resolvers, as a rollout would; replicas of one kind together.
    for (const name of names) await Promise.all(Array.from({ length: REPLICAS }, (_, i) => startReplica(name, i)))
  } catch (error) {
    for (const key of [...running.keys()]) running.get(key)!.proc.kill('SIGKILL')
    await redis.stop()
    await nats.stop()
    throw new Error(`${(error as Error).message}\n${lines.slice(-80).join('\n')}`)
  }

  const bus = await createNatsBus(nats.url, 'test-observer')
  const gateways = gatewayPorts.map((port) => `http://127.0.0.1:${port}`)
  let nextGateway = 0
  let nextResolver = 0
  const stopAll = async (name: ProcessName) => {
    await Promise.all(Array.from({ length: REPLICAS }, (_, i) => stopReplica(name, i, 'SIGTERM')))
  }

  return {
    mode: 'nats',
    env,
    gateways,
    request: (path, init) => fetch(`${gateways[nextGateway++ % REPLICAS]}${path}`, init),
    short: (path, init) => fetch(`http://127.0.0.1:${resolverPorts[nextResolver++ % REPLICAS]}${path}`, { redirect: 'manual', ...init }),
    bus,
    stopProcess: stopAll,
    async startProcess(name) {
      await Promise.all(Array.from({ length: REPLICAS }, (_, i) => startReplica(name, i)))
    },
    replicas: (name) => [...running.values()].filter((r) => r.name === name),
    kill: (name, index) => stopReplica(name, index, 'SIGKILL'),
    revive: (name, index) => startReplica(name, index),
    ...adminOf(env),
    output: () => lines.join('\n'),
    async stop() {
      await bus.close()
      for (const name of [...names].reverse()) await stopAll(name)
      await redis.stop()
      await nats.stop()
      rmSync(env.DATA_DIR!, { recursive: true, force: true })
    },
  } as ScaleOutStack & { output(): string }
}
