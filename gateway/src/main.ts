import { loadNatsConfigOrExit, onShutdown } from '@lr/platform/lifecycle'
import { createNatsBus } from '@lr/platform/bus-nats'
import { failWhenClosed } from '@lr/platform/nats-connect'
import { listening, reaching, startOrExit, withoutCredentials } from '@lr/platform/startup'
import { log, startLogging } from '@lr/platform/log'
import { createGateway } from './app'
import { createAdmission } from './admission'

/** Composition root of the gateway process of TRANSPORT=nats mode; the services run as their own processes. */
const config = loadNatsConfigOrExit('gateway', Bun.env)
startLogging('gateway', config.LOG_LEVEL)
// Redis is not waited for: the limiter starts on its in-process fallback when it is away (docs/decisions.md §8).
const { bus, admission, server } = await startOrExit('gateway', async () => {
  const bus = await reaching('NATS', config.NATS_URL, () => createNatsBus(config.NATS_URL, 'gateway', { maxPayload: config.BUS_MAX_PAYLOAD_BYTES }))
  const admission = await createAdmission(config)
  const app = createGateway({
    bus,
    admit: admission.admit,
    readiness: { nats: () => bus.ping() },
    optional: admission.optional,
    corsOrigins: config.CORS_ORIGINS,
  })
  // Elysia shares the port by default (reusePort): a second product started on PORT would then
  // start and take a share of its connections, answering them from its own stores.
  const server = listening('PORT', config.PORT, () => app.listen({ port: config.PORT, hostname: '0.0.0.0', reusePort: false }))
  return { bus, admission, server }
})
log().info({ port: server.server?.port, nats: withoutCredentials(config.NATS_URL), limiter: config.LIMITER }, `API on :${server.server?.port} over ${withoutCredentials(config.NATS_URL)}`)
const shutdown = onShutdown('gateway', async () => {
  await server.stop()
  await admission.close()
  await bus.close()
})
failWhenClosed(bus.connection, shutdown.fail)
