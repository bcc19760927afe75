import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { type Config } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { createNatsBus } from '@lr/platform/bus-nats'
import { sqlitePathOf } from '@lr/platform/sqlite'
import { withoutCredentials } from '@lr/platform/startup'
import { openMongoIfConfigured } from '@lr/platform/lifecycle'
import { AUTH_STORE, startAuth } from '../start'

export interface AdminConnection {
  /** One request to the auth service, answered as a Bus's `request`. */
  call(subject: string, payload: unknown): Promise<unknown>
  close(): Promise<void>
  /** The SQLite file this connection made (it did not exist), as an absolute path. */
  created?: string
}

/**
 * How the command line reaches the deployment that shares its environment. TRANSPORT=nats: the
 * running auth service, over NATS. TRANSPORT=memory: the deployment's own store (the SQLite file
 * under DATA_DIR, whose WAL mode lets this write while `bun start` runs, or Mongo), with the auth
 * service run in this process over an in-process bus, so requests take the same decode path.
 * A SQLite file that is not there is made only for a command that `createsStore`: a DATA_DIR
 * with a typo would otherwise get an empty store, and keys the server never sees.
 */
export async function connectAdmin(config: Config, opts: { createsStore: boolean }): Promise<AdminConnection> {
  if (config.TRANSPORT === 'nats') {
    const bus = await createNatsBus(config.NATS_URL, 'auth-admin', { maxPayload: config.BUS_MAX_PAYLOAD_BYTES }).catch((error: Error) => {
      // Never the URL's user and password: this line lands in terminals and CI logs.
      throw new Error(`cannot reach NATS at ${withoutCredentials(config.NATS_URL)}: ${error.message}`)
    })
    return { call: (subject, payload) => bus.request(subject, payload), close: () => bus.close() }
  }
  const file = config.STORE === 'sqlite' ? resolve(sqlitePathOf(config.DATA_DIR, AUTH_STORE)) : undefined
  const created = file !== undefined && !existsSync(file) ? file : undefined
  if (created && !opts.createsStore)
    throw new Error(`no auth database at ${created}: is DATA_DIR (${config.DATA_DIR}) the one the server runs with? Only account create starts a new one`)
  // As every process opens it: an unreachable server is one line naming MongoDB and its URL
  // (without user and password), not the driver's bare "Server selection timed out".
  const mongo = await openMongoIfConfigured(config)
  const bus = createLocalBus({ maxPayload: config.BUS_MAX_PAYLOAD_BYTES })
  const auth = await startAuth({ bus, config, mongo }).catch(async (error) => {
    await Promise.all([bus.close(), mongo?.close()])
    throw error
  })
  return {
    call: (subject, payload) => bus.request(subject, payload),
    async close() {
      await auth.stop()
      await bus.close()
      await mongo?.close()
    },
    created,
  }
}
