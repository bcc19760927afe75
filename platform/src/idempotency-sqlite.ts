import type { Database } from 'bun:sqlite'
import { IDEMPOTENCY_TTL_S, type Receipt, ReceiptTaken } from '@lr/proto'

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
