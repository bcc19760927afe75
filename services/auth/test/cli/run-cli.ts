import { resolve } from 'node:path'

export const ROOT = resolve(import.meta.dir, '../../../..')

export interface CliResult {
  code: number
  stdout: string
  stderr: string
  /** stdout parsed as JSON (undefined when empty). */
  out: any
  /** stderr parsed as JSON (undefined when empty). */
  err: any
}

/** Runs the real admin command line (`bun run admin ...`) as a child process. */
export async function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  const proc = Bun.spawn(['bun', 'run', 'services/auth/src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, TRANSPORT: 'memory', STORE: 'sqlite', KEY_ACTIVATION_DELAY_S: '0', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  const parse = (text: string) => (text.trim() ? JSON.parse(text) : undefined)
  return { code, stdout, stderr, out: parse(stdout), err: parse(stderr) }
}
