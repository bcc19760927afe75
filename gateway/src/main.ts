import { loadConfigOrExit, onShutdown } from '@lr/platform/lifecycle'
import { createNatsBus } from '@lr/platform/bus-nats'
import { log, startLogging } from '@lr/platform/log'
import { createGateway } from './app'
import { createAdmission } from './admission'

/** Composition root of the gateway process of TRANSPORT=nats mode; the services run as their own processes. */
const config = loadConfigOrExit(Bun.env)
startLogging('gateway', config.LOG_LEVEL)

if (config.TRANSPORT !== 'nats') {
  console.error('[gateway] this entry runs the gateway alone over NATS (TRANSPORT=nats); the one-process mode is `bun start` (standalone/src/main.ts)')
  process.exit(2)
}
const bus = await createNatsBus(config.NATS_URL, 'gateway')
const admission = await createAdmission(config)
const app = createGateway({ bus, admit: admission.admit, readiness: { nats: () => bus.ping(), ...admission.readiness } })
const server = app.listen({ port: config.PORT, hostname: '0.0.0.0' })
log().info({ port: server.server?.port, nats: config.NATS_URL, limiter: config.LIMITER }, `API on :${server.server?.port} over ${config.NATS_URL}`)
onShutdown('gateway', async () => {
  await server.stop()
  await admission.close()
  await bus.close()
})
