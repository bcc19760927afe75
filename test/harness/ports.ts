import { createServer } from 'node:net'

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
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
