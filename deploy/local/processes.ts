import type { Subprocess } from 'bun'
import { join } from 'node:path'
import { ENTRY_POINTS, type ProcessName } from '../entry-points'

const ROOT = join(import.meta.dir, '..', '..')

export { ENTRY_POINTS, type ProcessName }

/**
 * How many times process `name` said it serves (its JSON log line "serving on ..." or, for the
 * gateway, "API on ..."), in output collected from it.
 */
export function servingCount(output: string, name: ProcessName): number {
  return output.match(new RegExp(`"process":"${name}"[^\n]*"msg":"(serving on|API on) `, 'g'))?.length ?? 0
}

export interface ProcessGroup {
  stop(name?: ProcessName): Promise<void>
  start(name: ProcessName): void
  /** Output of every process so far, for failure reports. */
  output(): string
  /** The process id of a running process (for memory sampling). */
  pid(name: ProcessName): number | undefined
  /** Resolves with a started process's exit code once it ended. */
  exited(name: ProcessName): Promise<number> | undefined
}

/** Starts every process (or `names`) with `env`, piping their output into one buffer. */
export function spawnProcesses(env: Record<string, string | undefined>, names = Object.keys(ENTRY_POINTS) as ProcessName[], opts: { inherit?: boolean; envOf?: (name: ProcessName) => Record<string, string> } = {}): ProcessGroup {
  const running = new Map<ProcessName, Subprocess>()
  let log = ''
  // Each line its process's name: a chunk may hold several lines, or end within one (a chunk
  // prefixed as a whole left its second line unnamed, and a test reading by name missed it).
  const collect = async (name: string, stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    let partial = ''
    for await (const chunk of stream) {
      const lines = (partial + decoder.decode(chunk, { stream: true })).split('\n')
      partial = lines.pop()!
      for (const line of lines) log += `[${name}] ${line}\n`
    }
    if (partial) log += `[${name}] ${partial}\n`
  }
  const start = (name: ProcessName) => {
    const proc = Bun.spawn(['bun', 'run', join(ROOT, ENTRY_POINTS[name])], {
      cwd: ROOT,
      env: { ...env, ...opts.envOf?.(name), TRANSPORT: 'nats' },
      stdout: opts.inherit ? 'inherit' : 'pipe',
      stderr: opts.inherit ? 'inherit' : 'pipe',
    })
    if (!opts.inherit) {
      void collect(name, proc.stdout as ReadableStream<Uint8Array>)
      void collect(name, proc.stderr as ReadableStream<Uint8Array>)
    }
    running.set(name, proc)
  }
  for (const name of names) start(name)
  return {
    start,
    output: () => log,
    pid: (name) => running.get(name)?.pid,
    exited: (name) => running.get(name)?.exited,
    async stop(name) {
      const targets = name ? [name] : [...running.keys()].reverse()
      for (const target of targets) {
        const proc = running.get(target)
        running.delete(target)
        if (!proc) continue
        proc.kill('SIGTERM')
        const exited = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => 'timeout' as const)])
        if (exited === 'timeout') proc.kill('SIGKILL')
      }
    },
  }
}
