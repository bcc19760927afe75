import { type Config } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { createNatsBus } from '@lr/platform/bus-nats'
import { startAuth } from '../start'
import type { AdminCall } from './run-admin'

export interface AdminConnection {
  call: AdminCall
  close(): Promise<void>
}

/**
 * How the command line reaches the deployment that shares its environment. TRANSPORT=nats: the
 * running auth service, over NATS. TRANSPORT=memory: the deployment's own store (the SQLite file
 * under DATA_DIR, whose WAL mode lets this write while `bun start` runs, or Mongo), with the auth
 * service run in this process over an in-process bus, so requests take the same decode path.
 */
export async function connectAdmin(config: Config): Promise<AdminConnection> {
  if (config.TRANSPORT === 'nats') {
    const bus = await createNatsBus(config.NATS_URL, 'auth-admin', { maxPayload: config.BUS_MAX_PAYLOAD_BYTES }).catch((error: Error) => {
      throw new Error(`cannot reach NATS at ${config.NATS_URL}: ${error.message}`)
    })
    return { call: (subject, payload) => bus.request(subject, payload), close: () => bus.close() }
  }
  const bus = createLocalBus({ maxPayload: config.BUS_MAX_PAYLOAD_BYTES })
  const auth = await startAuth({ bus, config })
  return {
    call: (subject, payload) => bus.request(subject, payload),
    async close() {
      await auth.stop()
      await bus.close()
    },
  }
}
