import type { Subprocess } from 'bun'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { waitUntil } from '../test/harness/ports'

export const ROOT = join(import.meta.dir, '..')

/** User + system clock ticks (1/100 s) in a /proc stat file: a process's or one of its threads'. */
export function cpuTicksOf(statFile: string): number {
  const stat = readFileSync(statFile, 'utf8')
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/** Clock ticks of each thread of a process, by "tid name" (for bench/threads.ts and procs-cpu.ts). */
export function threadTicks(pid: number | string): Record<string, number> {
  return Object.fromEntries(readdirSync(`/proc/${pid}/task`).map((tid) =>
    [`${tid} ${readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim()}`, cpuTicksOf(`/proc/${pid}/task/${tid}/stat`)]))
}

/** A process the bench started, with its output kept for failure reports. */
export interface Child {
  pid: number
  proc: Subprocess
  output(): string
  stop(): Promise<void>
}

/** Starts `bun run <entry>` (or any argv) with `env`, collecting its output. */
export function spawnChild(name: string, argv: string[], env: Record<string, string | undefined>): Child {
  const proc = Bun.spawn(argv, { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  let log = ''
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      log += decoder.decode(chunk)
      if (log.length > 200_000) log = log.slice(-100_000)
    }
  }
  void collect(proc.stdout as ReadableStream<Uint8Array>)
  void collect(proc.stderr as ReadableStream<Uint8Array>)
  return {
    pid: proc.pid,
    proc,
    output: () => `[${name}]\n${log}`,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return
      proc.kill('SIGTERM')
      const exited = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => 'timeout' as const)])
      if (exited === 'timeout') {
        proc.kill('SIGKILL')
        await proc.exited
      }
    },
  }
}

/** Waits until `url` answers with `status` (any answer when omitted). */
export async function waitForHttp(url: string, child: Child | undefined, what: string, status?: number, timeoutMs = 30_000) {
  try {
    await waitUntil(async () => {
      if (child && child.proc.exitCode !== null) throw new Error('exited')
      const response = await fetch(url, { redirect: 'manual' })
      await response.arrayBuffer()
      return status === undefined || response.status === status
    }, timeoutMs, what)
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${child?.output() ?? ''}`)
  }
}

/** Runs a command to completion; rejects with its output when it fails. */
export async function runToEnd(argv: string[], env: Record<string, string | undefined> = Bun.env, cwd = ROOT) {
  const proc = Bun.spawn(argv, { cwd, env, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${argv.join(' ')} exited ${code}:\n${stderr}\n${stdout}`)
  return { stdout, stderr }
}
