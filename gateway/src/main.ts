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
    // NATS is optional to readiness, as to the resolver's (docs/decisions.md §8): without it every
    // /v1 request is answered at once with a JSON 503 and Retry-After that clients act on, where an
    // ingress with no ready gateway left would answer its own HTML 503.
    readiness: {},
    optional: { nats: () => bus.ping(), ...admission.optional },
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
