import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')

/**
 * Runs an entry point (a path from the repository's root) with `env` over this process's own
 * until it exits, killed after 15 s: its exit code and its stderr's lines, the empty ones left out.
 */
export async function runToExit(entry: string, env: Record<string, string>): Promise<{ code: number; lines: string[] }> {
  const proc = Bun.spawn(['bun', 'run', join(ROOT, entry)], { cwd: ROOT, env: { ...Bun.env, ...env }, stdout: 'pipe', stderr: 'pipe' })
  const killer = setTimeout(() => proc.kill('SIGKILL'), 15_000)
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  clearTimeout(killer)
  return { code, lines: stderr.split('\n').filter((line) => line.trim() !== '') }
}
