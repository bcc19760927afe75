import type { RunningService, ServiceContext } from '@lr/platform/lifecycle'
import { serveAuth } from './handlers'
import { openAuthStore } from './open-store'
import { createAuthService, epochSeconds } from './service'

/** Starts the auth service on a bus (in-process or NATS): opens its store and serves every auth subject. */
export async function startAuth({ bus, config, mongo }: ServiceContext): Promise<RunningService> {
  const store = await openAuthStore(config, mongo)
  const service = createAuthService({ store, now: epochSeconds, activationDelayS: config.KEY_ACTIVATION_DELAY_S })
  const unsubscribe = serveAuth(bus, service)
  return {
    ready: () => store.ping(),
    async stop() {
      unsubscribe()
      await store.close()
    },
  }
}
