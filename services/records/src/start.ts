import type { Connection } from 'mongoose'
import { type Config, REPLY_ENVELOPE_BYTES } from '@lr/proto'
import type { RunningService, ServiceContext } from '@lr/platform/lifecycle'
import { openKeyClaims } from '@lr/platform/key-claims'
import { type OpenedStore, openServiceStore } from '@lr/platform/store'
import { createCursors, cursorSecretOf } from '@lr/platform/cursor'
import { log } from '@lr/platform/log'
import { createSqliteRecordStore } from './adapters/record-store.sqlite'
import { serveRecords } from './handlers'
import type { RecordStore } from './ports'
import { createRecordsService } from './service'

/** Opens the store config.STORE names (`${DATA_DIR}/records.sqlite`, or Mongo); see openServiceStore. */
export const openRecordStore = (config: Config, mongo?: Connection): Promise<OpenedStore<RecordStore>> =>
  openServiceStore(config, mongo, {
    name: 'records',
    sqlite: createSqliteRecordStore,
    mongo: async () => (await import('./adapters/record-store.mongo')).createMongoRecordStore,
  })

export interface StartRecordsOptions {
  /** Current time in epoch seconds; default the system clock. */
  now?: () => number
}

/** Starts the records service on a bus: opens its store and serves every records subject. */
export async function startRecords({ bus, config, mongo }: ServiceContext, opts: StartRecordsOptions = {}): Promise<RunningService> {
  const { store, close } = await openRecordStore(config, mongo)
  const keys = openKeyClaims(config)
  const service = createRecordsService({
    store,
    now: opts.now ?? (() => Math.floor(Date.now() / 1000)),
    maxReplyBytes: bus.maxPayload - REPLY_ENVELOPE_BYTES,
    claims: keys.claims,
    cursors: createCursors(cursorSecretOf(config, (message) => log().warn({ setting: 'CURSOR_SECRET' }, message))),
  })
  const unsubscribe = serveRecords(bus, service)
  return {
    ready: () => store.ping(),
    async stop() {
      unsubscribe()
      await close()
      keys.close()
    },
  }
}
