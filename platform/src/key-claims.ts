import { type Config, IDEMPOTENCY_TTL_S, type KeyClaims } from '@lr/proto'
import { claimEarlierAnswers, sqliteKeyClaims } from './idempotency-sqlite'
import { sqlitePathOf } from './sqlite'
import { openSqliteAtStart } from './sqlite-startup'
import { withStoreMetrics } from './store-metrics'

/** The file under DATA_DIR that the services that create share for their Idempotency-Keys. */
const KEY_CLAIMS_FILE = 'idempotency.sqlite'

/** The stores under DATA_DIR that keep Idempotency-Key answers (receipts) beside their writes. */
const ANSWERING_STORES = ['records', 'dynamic', 'webhooks']

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
  return openSqliteAtStart(path, (db) => {
    // A DATA_DIR of a release before this file: the answers its services keep claim their keys.
    const stores = ANSWERING_STORES.map((name) => sqlitePathOf(config.DATA_DIR, name))
    claimEarlierAnswers(db, stores, Math.floor(Date.now() / 1000) - IDEMPOTENCY_TTL_S)
    return { claims: withStoreMetrics('idempotency', sqliteKeyClaims(db)), close: () => db.close() }
  })
}
