import type { Database } from 'bun:sqlite'
import type { Connection } from 'mongoose'
import type { Config } from '@lr/proto'
import { sqlitePathOf } from './sqlite'
import { openSqliteAtStart } from './sqlite-startup'
import { createSqliteHealth, type SqliteHealthOptions, type StoreHealth } from './sqlite-health'
import { storeFailures, withStoreMetrics } from './store-metrics'
import { silenceOf, withSilenceBound } from './mongo-silence'

/** A store a service opened, and how to release what the opening acquired. */
export interface OpenedStore<S> {
  store: S
  close(): Promise<void>
  /**
   * What a call to this store made elsewhere than through `store` (another thread's connection
   * to its file) failed with, taken as the store's own calls' errors are (storeFailures): an
   * unusable store's a 503, logged, and its readiness false until it takes writes again.
   */
  failed(operation: string, error: unknown): unknown
}

/** How one service builds its store on each driver. */
export interface StoreAdapters<S extends Pingable> {
  /** File name under DATA_DIR: `${name}.sqlite`. */
  name: string
  sqlite(db: Database): S
  /** Loads the Mongo adapter lazily, so the embedded default never loads mongoose. */
  mongo(): Promise<(conn: Connection) => Promise<S>>
  /** How the SQLite store's readiness probes its file (sqlite-health.ts). */
  sqliteHealth?: SqliteHealthOptions
}

/** Every store port answers readiness. */
export interface Pingable {
  ping(): Promise<boolean>
}

/**
 * Opens the store config.STORE names: SQLite at `${DATA_DIR}/${name}.sqlite`, or Mongo over
 * `mongo` (the process's shared connection) or else a connection of its own to MONGODB_URL.
 * `close` releases only what this call opened.
 */
export async function openServiceStore<S extends Pingable>(config: Config, mongo: Connection | undefined, adapters: StoreAdapters<S>): Promise<OpenedStore<S>> {
  const opened = await openStore(config, mongo, adapters)
  const failed = storeFailures(adapters.name, opened.health)
  return { store: withStoreMetrics(adapters.name, opened.store, opened.health, failed), close: opened.close, failed }
}

async function openStore<S extends Pingable>(config: Config, mongo: Connection | undefined, adapters: StoreAdapters<S>): Promise<Omit<OpenedStore<S>, 'failed'> & { health?: StoreHealth }> {
  if (config.STORE === 'sqlite') {
    const path = sqlitePathOf(config.DATA_DIR, adapters.name)
    return openSqliteAtStart(path, (db) => ({
      store: adapters.sqlite(db),
      health: createSqliteHealth(db, path, adapters.sqliteHealth),
      close: async () => db.close(),
    }))
  }
  const create = await adapters.mongo()
  // Each call fails once its server stops answering, not when the gateway gives up (mongo-silence.ts).
  const bounded = async (conn: Connection) => withSilenceBound(await create(conn), silenceOf(conn.getClient()))
  if (mongo) return { store: await bounded(mongo), close: async () => undefined }
  const { connectMongo } = await import('./mongo')
  const own = await connectMongo(config.MONGODB_URL!)
  try {
    return { store: await bounded(own), close: () => own.close() }
  } catch (error) {
    await own.close()
    throw error
  }
}
