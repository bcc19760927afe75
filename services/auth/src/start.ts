import type { Connection } from 'mongoose'
import type { Config } from '@lr/proto'
import type { RunningService, ServiceContext } from '@lr/platform/lifecycle'
import { type OpenedStore, openServiceStore } from '@lr/platform/store'
import { storeSecondsOf } from '@lr/platform/store-clock'
import { createSqliteAuthStore } from './adapters/auth-store.sqlite'
import { serveAuth } from './handlers'
import type { AuthStore } from './ports'
import { createAuthService } from './service'

/** The auth store's name: its SQLite file under DATA_DIR (auth.sqlite) and its metrics label. */
export const AUTH_STORE = 'auth'

/** Opens the store config.STORE names (`${DATA_DIR}/auth.sqlite`, or Mongo); see openServiceStore. */
export const openAuthStore = (config: Config, mongo?: Connection): Promise<OpenedStore<AuthStore>> =>
  openServiceStore(config, mongo, {
    name: AUTH_STORE,
    sqlite: createSqliteAuthStore,
    mongo: async () => (await import('./adapters/auth-store.mongo')).createMongoAuthStore,
  })

/** Starts the auth service on a bus (in-process or NATS): opens its store and serves every auth subject. */
export async function startAuth(ctx: ServiceContext): Promise<RunningService> {
  const { store, close } = await openAuthStore(ctx.config, ctx.mongo)
  // The store's clock where it has one (AuthStore.now: MongoDB's server), else this process's.
  const service = createAuthService({ store, now: storeSecondsOf(store), activationDelayS: ctx.config.KEY_ACTIVATION_DELAY_S })
  const unsubscribe = serveAuth(ctx.bus, service)
  return {
    ready: () => store.ping(),
    async stop() {
      unsubscribe()
      await close()
    },
  }
}
