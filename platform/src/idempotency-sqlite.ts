import type { Database } from 'bun:sqlite'
import { IDEMPOTENCY_TTL_S, type KeyClaims, type Receipt, ReceiptTaken } from '@lr/proto'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS receipts (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  response TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS receipts_created_at ON receipts (created_at);`

type Row = Omit<Receipt, 'response'> & { response: string }

/**
 * Idempotency receipts in a service's own SQLite database. `write` must run inside the
 * transaction that stores the records: a live twin makes it throw ReceiptTaken, which rolls
 * the whole transaction back; an expired one is replaced.
 */
export function sqliteReceipts(db: Database) {
  db.exec(SCHEMA)
  const find = db.prepare<Row, [string, string, number]>('SELECT * FROM receipts WHERE scope = ? AND key = ? AND created_at >= ?')
  const upsert = db.prepare<never, Record<string, string | number>>(
    `INSERT INTO receipts (scope, key, fingerprint, response, created_at) VALUES ($scope, $key, $fingerprint, $response, $created_at)
     ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, response = excluded.response, created_at = excluded.created_at
     WHERE receipts.created_at < $expired`,
  )
  const purge = db.prepare<never, [number]>('DELETE FROM receipts WHERE created_at < ?')
  let writes = 0
  return {
    async findReceipt(scope: string, key: string, since: number): Promise<Receipt | null> {
      const row = find.get(scope, key, since)
      return row ? { ...row, response: JSON.parse(row.response) } : null
    },
    write(receipt: Receipt): void {
      const expired = receipt.created_at - IDEMPOTENCY_TTL_S
      const { changes } = upsert.run({ ...receipt, response: JSON.stringify(receipt.response), expired })
      if (changes === 0) throw new ReceiptTaken()
      if (++writes % 1000 === 0) purge.run(expired) // keep the table to about a day of receipts
    },
  }
}

const CLAIMS_SCHEMA = `
CREATE TABLE IF NOT EXISTS key_claims (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS key_claims_created_at ON key_claims (created_at);`

/**
 * KeyClaims in a SQLite database every service that creates opens (openKeyClaims): one
 * transaction claims a free or expired (scope, key) and reads who holds it, so of two services
 * racing for one key exactly one gets its own fingerprint back.
 */
export function sqliteKeyClaims(db: Database): KeyClaims {
  db.exec(CLAIMS_SCHEMA)
  const upsert = db.prepare<never, Record<string, string | number>>(
    `INSERT INTO key_claims (scope, key, fingerprint, created_at) VALUES ($scope, $key, $fingerprint, $at)
     ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, created_at = excluded.created_at
     WHERE key_claims.created_at < $since`,
  )
  const holder = db.prepare<{ fingerprint: string }, [string, string]>('SELECT fingerprint FROM key_claims WHERE scope = ? AND key = ?')
  const purge = db.prepare<never, [number]>('DELETE FROM key_claims WHERE created_at < ?')
  let claims = 0
  const claim = db.transaction((scope: string, key: string, fingerprint: string, at: number, since: number) => {
    upsert.run({ scope, key, fingerprint, at, since })
    if (++claims % 1000 === 0) purge.run(since) // keep the table to about a day of keys
    return holder.get(scope, key)!.fingerprint
  })
  return {
    async claim(scope, key, fingerprint, at, since) {
      // IMMEDIATE: take the write lock first, so no other connection slips in between the two statements.
      return claim.immediate(scope, key, fingerprint, at, since)
    },
  }
}
