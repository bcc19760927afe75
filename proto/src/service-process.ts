import type { Connection } from 'mongoose'
import type { Bus } from './bus'
import { type Config, ConfigError, loadConfig } from './config'
import { connectMongo } from './mongo'
import { createNatsBus } from './bus-nats'

/** What a started service gives back: how to stop it and whether its store answers. */
export interface RunningService {
  stop(): Promise<void>
  ready(): Promise<boolean>
}

export interface ServiceContext {
  bus: Bus
  config: Config
  /** The process's one Mongo connection when STORE=mongo. */
  mongo?: Connection
}

/** Reads config once and exits with a message naming the bad setting. */
export function loadConfigOrExit(env: Record<string, string | undefined>): Config {
  try {
    return loadConfig(env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    console.error(`[config] ${error.message}`)
    process.exit(2)
  }
}

/** Opens the Mongo connection only when the config asks for the Mongo store. */
export const openMongoIfConfigured = async (config: Config) =>
  config.STORE === 'mongo' ? connectMongo(config.MONGODB_URL!) : undefined

/** Runs `stop` once on SIGTERM or SIGINT, then exits 0 (1 when stopping failed). */
export function onShutdown(name: string, stop: () => Promise<void>): void {
  let stopping = false
  const handle = async (signal: string) => {
    if (stopping) return
    stopping = true
    console.log(`[${name}] ${signal}: shutting down`)
    try {
      await stop()
      process.exit(0)
    } catch (error) {
      console.error(`[${name}] shutdown failed:`, error)
      process.exit(1)
    }
  }
  process.on('SIGTERM', () => void handle('SIGTERM'))
  process.on('SIGINT', () => void handle('SIGINT'))
}

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
