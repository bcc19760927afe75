import { loadConfigOrExit, onShutdown, openMongoIfConfigured, type RunningService, type ServiceContext } from './lifecycle'
import { createNatsBus } from './bus-nats'

/**
 * Entry point of one service process in TRANSPORT=nats mode: config, NATS bus, optional Mongo,
 * start the service, stop it cleanly on SIGTERM.
 */
export async function runServiceProcess(name: string, start: (ctx: ServiceContext) => Promise<RunningService>) {
  const config = loadConfigOrExit(Bun.env)
  const bus = await createNatsBus(config.NATS_URL, name)
  const mongo = await openMongoIfConfigured(config)
  const service = await start({ bus, config, mongo })
  console.log(`[${name}] serving on ${config.NATS_URL}`)
  onShutdown(name, async () => {
    await service.stop()
    await bus.close()
    await mongo?.close()
  })
}
