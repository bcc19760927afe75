import { loadConfigOrExit, onShutdown } from '@lr/proto'
import { createNatsBus } from '@lr/proto/bus-nats'
import { createGateway } from './app'
import { createAdmission } from './admission'
import { startStandalone } from './standalone'

/**
 * Composition root of the gateway. TRANSPORT=memory (default): the whole product in this
 * process. TRANSPORT=nats: the gateway alone; the services run as their own processes.
 */
const config = loadConfigOrExit(Bun.env)

if (config.TRANSPORT === 'memory') {
  const product = await startStandalone(config)
  const server = product.gateway.listen({ port: config.PORT, hostname: '0.0.0.0' })
  const short = Bun.serve({ port: config.SHORT_PORT, hostname: '0.0.0.0', fetch: product.resolver.fetch })
  console.log(`[gateway] one process: API on :${server.server?.port}, short links on :${short.port}, store ${config.STORE}, data in ${config.DATA_DIR}`)
  onShutdown('gateway', async () => {
    await server.stop()
    await short.stop()
    await product.stop()
  })
} else {
  const bus = await createNatsBus(config.NATS_URL, 'gateway')
  const admission = await createAdmission(config)
  const app = createGateway({ bus, admit: admission.admit, readiness: { nats: () => bus.ping(), ...admission.readiness } })
  const server = app.listen({ port: config.PORT, hostname: '0.0.0.0' })
  console.log(`[gateway] API on :${server.server?.port} over ${config.NATS_URL}`)
  onShutdown('gateway', async () => {
    await server.stop()
    await admission.close()
    await bus.close()
  })
}
