import { type Bus, type Config, type KeyClaims, type RecordEventSink, REPLY_ENVELOPE_BYTES } from '@lr/proto'
import { createCursors, type Cursors, cursorSecretOf } from '@lr/platform/cursor'
import { openKeyClaims } from '@lr/platform/key-claims'
import { log } from '@lr/platform/log'
import { storeSecondsOf } from '@lr/platform/store-clock'
import { busRecordEvents } from './events'

/** What a library service's start takes besides its context (tests and process entries set them). */
export interface LibraryStartOptions {
  /** Current time in epoch seconds; default the system clock. */
  now?: () => number
  /**
   * Where record events go (webhooks): the process entry with TRANSPORT=nats gives the
   * RECORD_EVENTS stream; default a request to the webhooks worker of this process (busRecordEvents).
   */
  events?: RecordEventSink
}

/**
 * What a library service (records, dynamic) takes from its deployment beyond its store: the
 * clock (the store's, when it has one), the reply size its bus allows, the shared Idempotency-Key claims, the cursor key,
 * where record events go and whether it counts its export Worker's chunks. One place, so both
 * services start alike; `close` releases the claims file.
 */
export function libraryDeploymentOf(bus: Bus, config: Config, opts: LibraryStartOptions = {}, store?: { now?(): number }): {
  now: () => number
  events: RecordEventSink
  maxReplyBytes: number
  claims: KeyClaims | undefined
  cursors: Cursors
  countWorkerChunks: boolean
  close(): void
} {
  const keys = openKeyClaims(config)
  return {
    // The store's clock where it has one (LibraryStore.now: MongoDB's server), else this process's.
    now: opts.now ?? storeSecondsOf(store ?? {}),
    events: opts.events ?? busRecordEvents(bus),
    maxReplyBytes: bus.maxPayload - REPLY_ENVELOPE_BYTES,
    claims: keys.claims,
    cursors: createCursors(cursorSecretOf(config, (message) => log().warn({ setting: 'CURSOR_SECRET' }, message))),
    // One process: the gateway streams export chunks on this thread and counts them (LibraryDeps).
    countWorkerChunks: config.TRANSPORT !== 'memory',
    close: keys.close,
  }
}
