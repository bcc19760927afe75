import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { freePort, waitForPort } from './ports'

export interface NatsServer {
  url: string
  port: number
  stop(): Promise<void>
}

/**
 * Starts a private nats-server on a free loopback port (JetStream with a temporary store dir
 * when asked). max_payload is raised so a full 1 MiB API body can always be forwarded.
 */
export async function startNats(opts: { jetstream?: boolean } = {}): Promise<NatsServer> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'lr-nats-'))
  const conf = join(dir, 'nats.conf')
  writeFileSync(
    conf,
    [`listen: 127.0.0.1:${port}`, 'max_payload: 8MB', opts.jetstream ? `jetstream { store_dir: "${join(dir, 'js')}" }` : ''].join('\n'),
  )
  const proc: Subprocess = Bun.spawn(['nats-server', '-c', conf], { stdout: 'ignore', stderr: 'pipe' })
  await waitForPort(port)
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
