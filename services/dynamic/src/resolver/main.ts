import { loadConfigOrExit, onShutdown } from '@lr/proto'
import { createNatsBus } from '@lr/proto/bus-nats'
import { startHealthListener } from '@lr/proto/health-listener'
import { createResolver } from './resolver'

// Process entry of the short-link resolver when TRANSPORT=nats: its own listener on SHORT_PORT,
// never behind the gateway. Any number may run; each follows every change event. Its path space
// is codes, so probes (/healthz, /readyz) are on HEALTH_PORT when set.
const config = loadConfigOrExit(Bun.env)
const bus = await createNatsBus(config.NATS_URL, 'resolver')
const resolver = createResolver({
  bus,
  shortBaseUrl: config.SHORT_BASE_URL,
  trustProxy: config.TRUST_PROXY === 1,
  visitorHashKey: config.VISITOR_HASH_KEY,
})
const server = Bun.serve({ port: config.SHORT_PORT, hostname: '0.0.0.0', fetch: resolver.fetch })
const health = config.HEALTH_PORT > 0 ? startHealthListener(config.HEALTH_PORT, { nats: () => bus.ping() }) : undefined
console.log(`[resolver] serving on :${server.port} over ${config.NATS_URL}${health ? `, probes on :${health.port}` : ''}`)
onShutdown('resolver', async () => {
  await server.stop()
  resolver.stop()
  await bus.close()
  await health?.stop()
})
