import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { ENTRY_POINTS, type ProcessName } from '../../deploy/entry-points'
import { freePort, waitUntil } from '../harness/ports'
import { ROOT } from './manifests'

/** One pod's worth: a process of TRANSPORT=nats mode on its own ports, as a Deployment runs it. */
export interface Replica {
  name: ProcessName
  /** Where its HTTP answers: the API (gateway) or short links (resolver). */
  base: string
  /** Its /metrics: on PORT for the gateway, on HEALTH_PORT for every other process. */
  metrics: string
  log(): string
  /** Resolves once its readiness probe answers 200 (what gates traffic in Kubernetes). */
  ready(timeoutMs?: number): Promise<void>
  /** SIGTERM, then its exit code and how long it took to exit. */
  terminate(): Promise<{ code: number; ms: number }>
  kill(): void
}

/** Starts one replica of `name` with `env`, its own PORT / SHORT_PORT / HEALTH_PORT. */
export async function startReplica(name: ProcessName, env: Record<string, string>): Promise<Replica> {
  const ports = { PORT: await freePort(), SHORT_PORT: await freePort(), HEALTH_PORT: await freePort() }
  let log = ''
  const proc: Subprocess = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS[name])], {
    cwd: ROOT,
    env: { ...env, TRANSPORT: 'nats', PORT: String(ports.PORT), SHORT_PORT: String(ports.SHORT_PORT), HEALTH_PORT: String(ports.HEALTH_PORT) },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  for (const stream of [proc.stdout, proc.stderr] as ReadableStream<Uint8Array>[])
    void (async () => {
      for await (const chunk of stream) log += new TextDecoder().decode(chunk)
    })()
  const probe = name === 'gateway' ? `http://127.0.0.1:${ports.PORT}/readyz` : `http://127.0.0.1:${ports.HEALTH_PORT}/readyz`
  return {
    name,
    base: `http://127.0.0.1:${name === 'resolver' ? ports.SHORT_PORT : ports.PORT}`,
    metrics: probe.replace(/\/readyz$/, '/metrics'),
    log: () => log,
    async ready(timeoutMs = 20_000) {
      await waitUntil(async () => (await fetch(probe)).status === 200, timeoutMs, `${name} to be ready`).catch((error) => {
        throw new Error(`${error.message}\n${log}`)
      })
    },
    async terminate() {
      const started = performance.now()
      proc.kill('SIGTERM')
      const code = await proc.exited
      return { code, ms: Math.round(performance.now() - started) }
    },
    kill: () => proc.kill('SIGKILL'),
  }
}
