import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { freePort, waitForPort } from './ports'
import { stopProcess } from './stop-process'

export interface NatsServer {
  url: string
  port: number
  /** Stops the server for good and removes its store. */
  stop(): Promise<void>
  /** Stops the server process only: same port, config and JetStream store for `up()`. */
  down(): Promise<void>
  /** Starts the server again after `down()`, on the same port, with its JetStream store. */
  up(): Promise<void>
  /** With `auth`: the password the server takes from its next `up()` on (a rotation). */
  setPassword(password: string): void
  /**
   * Stops (SIGSTOP) or continues (SIGCONT) the server: a hung broker that keeps its sockets open.
   * `freeze` resolves once the process is stopped: a busy one runs on for a few milliseconds
   * after the signal, answering what reaches it meanwhile.
   */
  freeze(): Promise<void>
  thaw(): void
}

/**
 * Starts a private nats-server on a free loopback port (JetStream with a temporary store dir
 * when asked; with `auth`, one user whose credentials `url` carries). max_payload is raised so a
 * full 1 MiB API body can always be forwarded. `maxFileStore` bounds JetStream's file store
 * (`max_file_store`, e.g. "2MB"): a server whose store fills up refuses writes.
 */
export async function startNats(opts: { jetstream?: boolean; auth?: { user: string; password: string }; maxFileStore?: string } = {}): Promise<NatsServer> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'lr-nats-'))
  const conf = join(dir, 'nats.conf')
  const configure = (password?: string) =>
    writeFileSync(
      conf,
      [
        `listen: 127.0.0.1:${port}`,
        'max_payload: 8MB',
        opts.jetstream ? `jetstream { store_dir: "${join(dir, 'js')}"${opts.maxFileStore ? `, max_file_store: ${opts.maxFileStore}` : ''} }` : '',
        opts.auth ? `authorization { user: "${opts.auth.user}", password: "${password}" }` : '',
      ].join('\n'),
    )
  configure(opts.auth?.password)
  let proc: Subprocess | undefined
  const up = async () => {
    proc = Bun.spawn(['nats-server', '-c', conf], { stdout: 'ignore', stderr: 'pipe' })
    await waitForPort(port)
  }
  const down = async () => {
    if (proc) await stopProcess(proc)
    proc = undefined
  }
  await up()
  return {
    url: opts.auth ? `nats://${opts.auth.user}:${opts.auth.password}@127.0.0.1:${port}` : `nats://127.0.0.1:${port}`,
    setPassword: configure,
    port,
    up,
    down,
    async freeze() {
      proc?.kill('SIGSTOP')
      const stat = `/proc/${proc?.pid}/stat`
      // Linux: the state after the command's name is T once stopped.
      for (let waited = 0; existsSync(stat) && waited < 1000; waited += 5) {
        if (readFileSync(stat, 'utf8').split(') ')[1]?.startsWith('T')) return
        await Bun.sleep(5)
      }
    },
    thaw: () => void proc?.kill('SIGCONT'),
    async stop() {
      proc?.kill('SIGCONT')
      await down()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
