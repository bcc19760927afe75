import { resolve } from 'node:path'

export const ROOT = resolve(import.meta.dir, '../../../..')

export interface CliResult {
  code: number
  stdout: string
  stderr: string
  /** stdout parsed as one JSON value (undefined when empty; throws when it is anything else but help text). */
  out: any
  /** stderr parsed as one JSON value, after the notice (undefined when empty; throws when it is anything else). */
  err: any
  /** The `{"notice"}` line a command that made the SQLite database writes first on stderr, parsed. */
  notice: any
}

/** Runs the real admin command line as the README does (`bun run --silent admin ...`), as a child process. */
export async function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  const proc = Bun.spawn(['bun', 'run', '--silent', 'admin', ...args], {
    cwd: ROOT,
    env: { ...process.env, TRANSPORT: 'memory', STORE: 'sqlite', KEY_ACTIVATION_DELAY_S: '0', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  const parse = (text: string) => (text.trim() ? JSON.parse(text) : undefined)
  const isHelp = stdout.startsWith('usage: ')
  const noticed = stderr.startsWith('{"notice":')
  const [notice, err] = noticed ? [stderr.slice(0, stderr.indexOf('\n') + 1), stderr.slice(stderr.indexOf('\n') + 1)] : ['', stderr]
  return { code, stdout, stderr, out: isHelp ? undefined : parse(stdout), err: parse(err), notice: parse(notice) }
}
