import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

/**
 * The kernel's range for outgoing connections' local ports. A port chosen inside it (as `listen(0)`
 * would) can be taken by any process's next outgoing connection (a replica dialling NATS, Mongo or
 * Redis) before the server meant for it binds: the scale-out stack then fails at random with
 * EADDRINUSE. So test ports come from below the range, where the kernel never picks one on its own.
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
    if (low! > 0 && high! >= low!) return [low!, high!]
  } catch {
    // Not Linux: the IANA dynamic range, the default of macOS and the BSDs.
  }
  return [49152, 65535]
}
const [EPHEMERAL_LOW] = ephemeralRange()
const POOL_LOW = 10_000
/** Ports this test process already handed out: two callers never get the same one. */
const handedOut = new Set<number>()

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/** A TCP port on 127.0.0.1 that was free a moment ago and lies outside the ephemeral range. */
export async function freePort(): Promise<number> {
  const span = EPHEMERAL_LOW - POOL_LOW
  for (let attempt = 0; span > 1000 && attempt < 200; attempt++) {
    const port = POOL_LOW + Math.floor(Math.random() * span)
    if (handedOut.has(port) || !(await bindable(port))) continue
    handedOut.add(port)
    return port
  }
  throw new Error(`no free port between ${POOL_LOW} and ${EPHEMERAL_LOW} (the ephemeral range starts there)`)
}

/** `count` consecutive free ports (a setting that is the first of several, start:nats's HEALTH_PORT); the first is returned. */
export async function freePortRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const first = await freePort()
    const rest = Array.from({ length: count - 1 }, (_, i) => first + 1 + i)
    if (rest.some((port) => handedOut.has(port) || port >= EPHEMERAL_LOW)) continue
    if (!(await Promise.all(rest.map(bindable))).every(Boolean)) continue
    for (const port of rest) handedOut.add(port)
    return first
  }
  throw new Error(`no ${count} consecutive free ports`)
}

/** Resolves once something accepts TCP connections on the port, or rejects after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      Bun.connect({ hostname: '127.0.0.1', port, socket: { open: (s) => (s.end(), resolve(true)), data() {}, error: () => resolve(false), connectError: () => resolve(false) } }).catch(() => resolve(false))
    })
    if (open) return
    await Bun.sleep(50)
  }
  throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`)
}

/** Polls `check` until it returns true. */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await Promise.resolve(check()).catch(() => false)) return
    await Bun.sleep(50)
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
}
