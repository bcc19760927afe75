import { connect, createServer, type Server, type Socket } from 'node:net'
import { freePort } from './ports'

export interface TcpProxy {
  /** The port clients dial instead of the target's. */
  readonly port: number
  /** Drops every connection through it (and what it held) and refuses new ones: a network cut between its clients and the target. */
  cut(): Promise<void>
  /** Accepts connections again, on the same port. */
  reopen(): Promise<void>
  /**
   * Holds what clients send from the first chunk holding `bytes` on (that chunk too, on every
   * connection), as a process stalled right before that request would; resolves once it holds.
   */
  holdFrom(bytes: Uint8Array): Promise<void>
  /**
   * Drops every connection that holds nothing and refuses new ones, keeping those holding
   * (holdFrom) open and silent: a server gone for its clients' new connections while one
   * request's connection neither answers nor closes.
   */
  cutIdle(): Promise<void>
  /** Sends on what was held, in order, and relays again. */
  release(): void
  stop(): Promise<void>
}

/**
 * A TCP relay on a free loopback port to `targetPort` on 127.0.0.1, for cutting one client off a
 * server (its NATS connection drops) while others stay connected to the server directly.
 */
export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const port = await freePort()
  const sockets = new Set<Socket>()
  let server: Server | undefined
  let hold: { bytes: Uint8Array; onHeld: () => void; held: [Socket, Buffer][] | null } | null = null
  const pairs = new Map<Socket, Socket>()
  const relay = (client: Socket) => {
    const upstream = connect(targetPort, '127.0.0.1')
    pairs.set(client, upstream)
    const end = () => {
      pairs.delete(client)
      for (const socket of [client, upstream]) {
        socket.destroy()
        sockets.delete(socket)
      }
    }
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', end).on('close', end)
    }
    client.on('data', (chunk: Buffer) => {
      if (hold && !hold.held && chunk.indexOf(hold.bytes) !== -1) {
        hold.held = []
        hold.onHeld()
      }
      if (hold?.held) hold.held.push([upstream, chunk])
      else upstream.write(chunk)
    })
    upstream.pipe(client)
  }
  const open = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer(relay)
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => resolve())
    })
  const cut = async () => {
    hold = null // what it held is lost with its connections
    for (const socket of sockets) socket.destroy()
    sockets.clear()
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
    server = undefined
  }
  await open()
  return {
    port,
    cut,
    async cutIdle() {
      const holding = new Set<Socket>((hold?.held ?? []).map(([upstream]) => upstream))
      const kept = new Set<Socket>()
      for (const socket of sockets) if (holding.has(socket)) kept.add(socket)
      // A held upstream's client side stays too: find it by the pairs relay() made.
      for (const [client, upstream] of pairs) if (kept.has(upstream)) kept.add(client)
      for (const socket of sockets) if (!kept.has(socket)) socket.destroy()
      // Not waiting for close's callback: it comes once every connection ended, the kept ones too.
      server?.close()
      server = undefined
    },
    reopen: open,
    holdFrom: (bytes) => new Promise<void>((onHeld) => (hold = { bytes, onHeld, held: null })),
    release() {
      const held = hold?.held ?? []
      hold = null
      for (const [upstream, chunk] of held) upstream.write(chunk)
    },
    stop: cut,
  }
}
