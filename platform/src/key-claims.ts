import type { Config, KeyClaims } from '@lr/proto'
import { sqliteKeyClaims } from './idempotency-sqlite'
import { openSqliteAtStart } from './sqlite-startup'
import { withStoreMetrics } from './store-metrics'

/** The file under DATA_DIR that the services that create share for their Idempotency-Keys. */
const KEY_CLAIMS_FILE = 'idempotency.sqlite'

/**
 * The KeyClaims of the deployment (docs/decisions.md §8). SQLite: `${DATA_DIR}/idempotency.sqlite`,
 * opened by records and dynamic alike (each service's receipts stay in its own file, written with
 * its records). Mongo: none, since every service's receipts share one collection, which already
 * refuses a key used on another route.
 */
export function openKeyClaims(config: Config): { claims: KeyClaims | undefined; close(): void } {
  if (config.STORE !== 'sqlite') return { claims: undefined, close: () => undefined }
  const path = `${config.DATA_DIR}/${KEY_CLAIMS_FILE}`
  // Wrapped as every store is: a claim on a full disk or a file locked past the busy timeout is a
  // 503 with Retry-After, as the same create without an Idempotency-Key is (it was a 500).
  return openSqliteAtStart(path, (db) => ({ claims: withStoreMetrics('idempotency', sqliteKeyClaims(db)), close: () => db.close() }))
}
