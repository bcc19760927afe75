import { join } from 'node:path'
import type { Connection } from 'mongoose'
import type { Config } from '@lr/proto'
import { openSqlite } from '@lr/platform/sqlite'
import type { AuthStore } from './ports'
import { createSqliteAuthStore } from './adapters/auth-store.sqlite'

export const authSqlitePath = (config: Config) => join(config.DATA_DIR, 'auth.sqlite')

/** createMongoAuthStore, loaded on first use so the embedded default never loads mongoose. */
export async function createMongoAuthStore(conn: Connection): Promise<AuthStore> {
  return (await import('./adapters/auth-store.mongo')).createMongoAuthStore(conn)
}

/**
 * The store config.STORE names: `${DATA_DIR}/auth.sqlite`, or Mongo over `mongo` (the process's
 * shared connection, left open on close) or, without it, a connection of its own.
 */
export async function openAuthStore(config: Config, mongo?: Connection): Promise<AuthStore> {
  if (config.STORE === 'sqlite') return createSqliteAuthStore(openSqlite(authSqlitePath(config)))
  if (mongo) return createMongoAuthStore(mongo)
  const { connectMongo } = await import('@lr/platform/mongo')
  const own = await connectMongo(config.MONGODB_URL!)
  try {
    return { ...(await createMongoAuthStore(own)), close: () => own.close() }
  } catch (error) {
    await own.close()
    throw error
  }
}
