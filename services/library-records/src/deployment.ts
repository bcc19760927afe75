import { type Bus, type Config, type KeyClaims, REPLY_ENVELOPE_BYTES } from '@lr/proto'
import { createCursors, type Cursors, cursorSecretOf } from '@lr/platform/cursor'
import { openKeyClaims } from '@lr/platform/key-claims'
import { log } from '@lr/platform/log'

/**
 * What a library service (records, dynamic) takes from its deployment beyond its store: the
 * clock, the reply size its bus allows, the shared Idempotency-Key claims and the cursor key.
 * One place, so both services start alike; `close` releases the claims file.
 */
export function libraryDeploymentOf(bus: Bus, config: Config, now?: () => number): {
  now: () => number
  maxReplyBytes: number
  claims: KeyClaims | undefined
  cursors: Cursors
  close(): void
} {
  const keys = openKeyClaims(config)
  return {
    now: now ?? (() => Math.floor(Date.now() / 1000)),
    maxReplyBytes: bus.maxPayload - REPLY_ENVELOPE_BYTES,
    claims: keys.claims,
    cursors: createCursors(cursorSecretOf(config, (message) => log().warn({ setting: 'CURSOR_SECRET' }, message))),
    close: keys.close,
  }
}
