import type { Connection } from 'mongoose'
import type { Bus } from '@lr/proto'
import { type Config, ConfigError, loadConfig } from '@lr/proto'
import { reaching } from './startup'
import { errorFields, log } from './log'
import { beginShutdown } from './shutdown-failures'

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

/**
 * What this process creates on disk is its user's alone (umask 077): DATA_DIR's stores hold
 * account emails, webhook signing secrets and scans, and under the usual umask (022) every user
 * of the machine could read them, as could a backup's copy. SQLite gives a store's -wal and -shm
 * the store's own mode. A directory made beforehand keeps its mode; the files in it are 0600.
 * Every entry calls this before it writes anything (loadConfigOrExit, the admin command line).
 */
export function keepFilesPrivate(): void {
  process.umask(0o077)
}

/** Reads config once and exits with a message naming the bad setting; files private from here on. */
export function loadConfigOrExit(env: Record<string, string | undefined>): Config {
  keepFilesPrivate()
  try {
    return loadConfig(env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    // Before any logger exists, and for a person at a terminal: one plain line on stderr.
    console.error(`[config] ${error.message}`)
    process.exit(2)
  }
}

/**
 * The config of a process of TRANSPORT=nats mode (deploy/entry-points.ts), or exit 2 with one
 * line. Such an entry talks over NATS whatever TRANSPORT says, but what follows TRANSPORT would
 * not: with memory and CURSOR_SECRET unset its list cursors are sealed with a random key of its
 * own (cursor.ts), which no other replica opens. The one-process mode is `bun start`.
 */
export function loadNatsConfigOrExit(name: string, env: Record<string, string | undefined>): Config {
  const config = loadConfigOrExit(env)
  if (config.TRANSPORT === 'nats') return config
  console.error(`[${name}] this entry runs the ${name} process alone over NATS (TRANSPORT=nats); the one-process mode is \`bun start\` (standalone/src/main.ts)`)
  process.exit(2)
}

/** Opens the Mongo connection only when the config asks for the Mongo store. */
export async function openMongoIfConfigured(config: Config): Promise<Connection | undefined> {
  if (config.STORE !== 'mongo') return undefined
  // Imported here so the embedded default never loads mongoose.
  const { connectMongo } = await import('./mongo')
  return reaching('MongoDB', config.MONGODB_URL!, () => connectMongo(config.MONGODB_URL!))
}

/** Longest graceful stop; below the 30 s grace period of deploy/k8s, so a stuck stop still logs why. */
export const SHUTDOWN_DEADLINE_MS = 25_000

/** How a process asks for its own stop (onShutdown). */
export interface Shutdown {
  /**
   * The process can no longer do its work (its NATS connection closed for good): one error line
   * with `fields`, the same stop as on SIGTERM, then exit 1, so its supervisor starts it again.
   * Ignored once a stop is under way: closing its own connections is part of every stop.
   */
  fail(fields: Record<string, unknown>, message: string): void
}

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits 0; 1 when stopping failed or did not finish
 * within SHUTDOWN_DEADLINE_MS, or when the stop came from `fail`.
 */
export function onShutdown(name: string, stop: () => Promise<void>): Shutdown {
  let stopping = false
  const run = async (exitCode: 0 | 1) => {
    // Failures the stop causes (a store closed under a handler still running) are summarised from here on.
    const summarise = beginShutdown()
    setTimeout(() => {
      summarise()
      log().error({ deadline_ms: SHUTDOWN_DEADLINE_MS }, 'shutdown did not finish in time')
      process.exit(1)
    }, SHUTDOWN_DEADLINE_MS).unref()
    try {
      await stop()
      summarise()
      process.exit(exitCode)
    } catch (error) {
      summarise()
      log().error(errorFields(error), 'shutdown failed')
      process.exit(1)
    }
  }
  const handle = (signal: string) => {
    if (stopping) return
    stopping = true
    log().info({ signal }, 'shutting down')
    void run(0)
  }
  process.on('SIGTERM', () => handle('SIGTERM'))
  process.on('SIGINT', () => handle('SIGINT'))
  return {
    fail(fields, message) {
      if (stopping) return
      stopping = true
      log().error(fields, message)
      void run(1)
    },
  }
}
