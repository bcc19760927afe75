import type { Connection } from 'mongoose'
import { loadConfig } from '@lr/proto'
import { connectMongo } from '@lr/platform/mongo'
import { createRecordsService, openRecordStore } from '@lr/records'
import type { TcpProxy } from './tcp-proxy'

/** The start of a Mongo command (`insert`, `findAndModify`, ...) on `collection` as sent on the wire (BSON: string element), for TcpProxy.holdFrom. */
export function commandOn(collection: string, command = 'insert'): Uint8Array {
  const name = new TextEncoder().encode(`${collection}\0`)
  const length = new Uint8Array(new Int32Array([name.length]).buffer)
  return new Uint8Array([0x02, ...new TextEncoder().encode(`${command}\0`), ...length, ...name])
}

/** A records service on a connection of its own to database `name` at `url`, through `proxy` when given; its closing goes to `cleanups`. */
export async function recordsReplica(url: string, name: string, cleanups: (() => Promise<unknown>)[], proxy?: TcpProxy, mongo: { silentMs?: number } = {}) {
  const target = new URL(url)
  if (proxy) [target.hostname, target.port] = ['127.0.0.1', String(proxy.port)]
  const base = await connectMongo(target.href, mongo)
  const conn: Connection = base.useDb(name, { useCache: false })
  const records = await openRecordStore(loadConfig({ STORE: 'mongo', MONGODB_URL: target.href }), conn)
  cleanups.push(() => base.close(), () => records.close())
  return { conn, records: createRecordsService({ store: records.store, now: () => Math.floor(Date.now() / 1000) }) }
}
