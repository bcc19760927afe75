/**
 * A throwaway redis-server for tests: free port, no persistence, killed by stop().
 * Suites guard with `skipReason('redis-server')` (servers.ts): skipped outside CI when the
 * binary is missing, a failure under CI=true.
 */
import type { Subprocess } from 'bun'
import { freePort } from './ports'

export interface RedisServer {
  url: string
  port: number
  /** Kills the server and waits until it has exited. */
  stop(): Promise<void>
  /** Starts a fresh, empty server on the same port (after stop()); with `password`, one that requires it instead (`url` keeps the old one). */
  restart(options?: { password?: string }): Promise<void>
  /** Freezes the server (SIGSTOP): connections stay open, nothing answers. */
  pause(): void
  /** Thaws a paused server (SIGCONT). */
  resume(): void
}

/** Resolves once the server answers PING with PONG over a raw connection (after AUTH with `password`); throws after timeoutMs. */
export async function waitForPong(port: number, timeoutMs = 5_000, password?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await pingOnce(port, password)) return
    await Bun.sleep(20)
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`)
}

function pingOnce(port: number, password?: string): Promise<boolean> {
  return new Promise((resolve) => {
    let answered = ''
    const done = (ok: boolean, socket?: { end(): void }) => {
      resolve(ok) // first: end() runs the close handler synchronously
      socket?.end()
    }
    Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open: (socket) => void socket.write(`${password === undefined ? '' : `*2\r\n$4\r\nAUTH\r\n$${Buffer.byteLength(password)}\r\n${password}\r\n`}PING\r\n`),
        data: (socket, data) => {
          answered += data.toString()
          if (answered.includes('+PONG')) done(true, socket)
          else if (answered.includes('-')) done(false, socket)
        },
        error: () => done(false),
        connectError: () => done(false),
        close: () => done(false),
      },
    }).catch(() => done(false))
  })
}

/** An ACL user (Redis 6+) besides the default one: `keys` its key pattern (`~keys`), `commands` its rules (every command by default). */
export interface RedisUser {
  name: string
  password: string
  keys: string
  commands?: string[]
}

function spawnRedis(binary: string, port: number, password?: string, user?: RedisUser): Subprocess {
  const auth = [...(password === undefined ? [] : ['--requirepass', password]), ...(user ? ['--user', user.name, 'on', `>${user.password}`, `~${user.keys}`, ...(user.commands ?? ['+@all'])] : [])]
  return Bun.spawn([binary, '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...auth], {
    stdout: 'ignore',
    stderr: 'pipe',
  })
}

/**
 * `password`: the server requires it (requirepass, the default user's); `url` carries it. `user`:
 * an ACL user as well, whose URL is `userUrl`.
 */
export async function startRedis(options: { password?: string; user?: RedisUser } = {}): Promise<RedisServer & { userUrl?: string }> {
  const { user } = options
  let password = options.password
  const binary = Bun.which('redis-server')
  if (!binary) throw new Error('redis-server is not on PATH; these tests need a real Redis')
  const port = await freePort()
  let child: Subprocess | undefined

  async function start() {
    const spawned = spawnRedis(binary!, port, password, user)
    child = spawned
    try {
      await waitForPong(port, 5_000, password)
    } catch (error) {
      spawned.kill('SIGKILL')
      const stderr = await new Response(spawned.stderr as ReadableStream).text()
      throw new Error(`${(error as Error).message}\n${stderr}`)
    }
  }
  async function stop() {
    if (!child) return
    child.kill('SIGKILL')
    await child.exited
    child = undefined
  }

  await start()
  return {
    url: `redis://${password === undefined ? '' : `:${encodeURIComponent(password)}@`}127.0.0.1:${port}`,
    ...(user && { userUrl: `redis://${encodeURIComponent(user.name)}:${encodeURIComponent(user.password)}@127.0.0.1:${port}` }),
    port,
    stop,
    async restart(again: { password?: string } = {}) {
      await stop()
      if ('password' in again) password = again.password
      await start()
    },
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
  }
}
