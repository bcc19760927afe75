import { type Config } from '@lr/proto'
import { createBusScanPublisher } from '@lr/platform/scan-publisher'
import { createLocalBus } from '@lr/platform/bus-local'
import { openMongoIfConfigured, type RunningService } from '@lr/platform/lifecycle'
import { startAuth } from '@lr/auth'
import { startRecords } from '@lr/records'
import { createResolverFromConfig, startDynamic } from '@lr/dynamic'
import { startAnalytics } from '@lr/analytics'
import { createAdmission, createGateway } from '@lr/gateway'

/** Every service of the product, as started in one process. */
const SERVICES = [startAuth, startRecords, startDynamic, startAnalytics]

/**
 * The whole product in one process over the in-process bus: what `bun start` runs, and what the
 * in-process API test suite drives through `gateway.handle`.
 */
export async function startStandalone(config: Config) {
  const bus = createLocalBus()
  const mongo = await openMongoIfConfigured(config)
  const services: RunningService[] = []
  for (const start of SERVICES) services.push(await start({ bus, config, mongo }))
  const admission = await createAdmission(config)
  const gateway = createGateway({
    bus,
    admit: admission.admit,
    readiness: { stores: async () => (await Promise.all(services.map((s) => s.ready()))).every(Boolean), ...admission.readiness },
  })
  // The short-link resolver over the same bus; main.ts (this package) gives it its own listener (SHORT_PORT).
  // Its scans are events of the bus, which analytics consumes (scans.*).
  const scans = createBusScanPublisher(bus)
  const resolver = createResolverFromConfig(bus, config, scans.publish)
  return {
    gateway,
    bus,
    resolver,
    async stop() {
      resolver.stop()
      await scans.flush()
      for (const service of services.reverse()) await service.stop()
      await admission.close()
      await bus.close()
      await mongo?.close()
    },
  }
}
