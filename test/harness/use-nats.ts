import { afterAll, beforeAll } from 'bun:test'
import { connect, type NatsConnection } from 'nats'
import { type NatsServer, startNats } from './nats'

/**
 * For a describe block: a private nats-server (startNats's options) and one connection to it,
 * for the block's tests; both gone after it.
 */
export function useNats(opts: Parameters<typeof startNats>[0] = {}): { server: NatsServer; nc: NatsConnection } {
  const used = {} as { server: NatsServer; nc: NatsConnection }
  beforeAll(async () => {
    used.server = await startNats(opts)
    used.nc = await connect({ servers: used.server.url })
  })
  afterAll(async () => {
    await used.nc?.close()
    await used.server?.stop()
  })
  return used
}
