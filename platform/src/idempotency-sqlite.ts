import type { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { IDEMPOTENCY_TTL_S, type KeyClaims, type Receipt, ReceiptTaken } from '@lr/proto'

/**
 * A table of rows keyed by (scope, key) that expire: `put` writes a row unless a live one holds
 * its key, replacing one created before `expired`; every 1000th put also purges the expired
 * rows, which keeps the table to about a day of keys. `columns` are the TEXT columns between the
 * key and created_at.
 */
function expiringKeys(db: Database, table: string, columns: readonly string[]) {
  db.exec(expiringSchema(table, columns))
  const all = ['scope', 'key', ...columns, 'created_at']
  const upsert = db.prepare<never, Record<string, string | number>>(
    `INSERT INTO ${table} (${all.join(', ')}) VALUES (${all.map((column) => `$${column}`).join(', ')})
     ON CONFLICT (scope, key) DO UPDATE SET ${[...columns, 'created_at'].map((column) => `${column} = excluded.${column}`).join(', ')}
     WHERE ${table}.created_at < $expired`,
  )
  const purge = db.prepare<never, [number]>(`DELETE FROM ${table} WHERE created_at < ?`)
  let puts = 0
  return {
    /** Whether the row was written (false: a live row holds its scope and key). */
    put(row: Record<string, string | number>, expired: number): boolean {
      const { changes } = upsert.run({ ...row, expired })
      if (++puts % 1000 === 0) purge.run(expired)
      return changes > 0
    },
  }
}

const expiringSchema = (table: string, columns: readonly string[]) => `
CREATE TABLE IF NOT EXISTS ${table} (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
${columns.map((column) => `  ${column} TEXT NOT NULL,\n`).join('')}  created_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS ${table}_created_at ON ${table} (created_at);`

const CLAIM_COLUMNS = ['fingerprint'] as const

type Row = Omit<Receipt, 'response'> & { response: string }

/**
 * Idempotency receipts in a service's own SQLite database. `write` must run inside the
 * transaction that stores the records: a live twin makes it throw ReceiptTaken, which rolls
 * the whole transaction back; an expired one is replaced.
 */
export function sqliteReceipts(db: Database) {
  const table = expiringKeys(db, 'receipts', ['fingerprint', 'response'])
  const find = db.prepare<Row, [string, string, number]>('SELECT * FROM receipts WHERE scope = ? AND key = ? AND created_at >= ?')
  return {
    async findReceipt(scope: string, key: string, since: number): Promise<Receipt | null> {
      const row = find.get(scope, key, since)
      return row ? { ...row, response: JSON.parse(row.response) } : null
    },
    write(receipt: Receipt): void {
      if (!table.put({ ...receipt, response: JSON.stringify(receipt.response) }, receipt.created_at - IDEMPOTENCY_TTL_S)) throw new ReceiptTaken()
    },
  }
}

/**
 * KeyClaims in a SQLite database every service that creates opens (openKeyClaims): one
 * transaction claims a free or expired (scope, key) and reads who holds it, so of two services
 * racing for one key exactly one gets its own fingerprint back.
 */
export function sqliteKeyClaims(db: Database): KeyClaims {
  const table = expiringKeys(db, 'key_claims', CLAIM_COLUMNS)
  const holder = db.prepare<{ fingerprint: string }, [string, string]>('SELECT fingerprint FROM key_claims WHERE scope = ? AND key = ?')
  const claim = db.transaction((scope: string, key: string, fingerprint: string, at: number, since: number) => {
    table.put({ scope, key, fingerprint, created_at: at }, since)
    return holder.get(scope, key)!.fingerprint
  })
  return {
    async claim(scope, key, fingerprint, at, since) {
      // IMMEDIATE: take the write lock first, so no other connection slips in between the two statements.
      return claim.immediate(scope, key, fingerprint, at, since)
    },
  }
}

/**
 * Makes the key claims' table of a file that has none yet with a claim for every answer the
 * services' own files (`stores`: receipts tables) keep from `since` on. Those answers were written
 * by a release before the shared register (or into a DATA_DIR restored without it): without
 * their claims, a key one of them answers for was free on every other service's route, so for
 * a day after such an upgrade a retry sent to the wrong route created records where the README
 * promises a 422. Only when the table is made: from then on every service claims before it
 * writes. One transaction with the table's creation, so of the connections opening the file at
 * once (records and dynamic, in one process or two) one makes and fills it; a file that cannot be
 * read is left out (its own service names it when it opens it).
 */
export function claimEarlierAnswers(db: Database, stores: readonly string[], since: number): number {
  const exists = () => db.query('SELECT 1 FROM sqlite_master WHERE type = \'table\' AND name = \'key_claims\'').get() !== null
  if (exists()) return 0
  // ATTACH is refused inside a transaction, and would make a file that is not there.
  const attached: string[] = []
  for (const [i, path] of stores.entries()) {
    if (!existsSync(path)) continue
    let name: string | undefined
    try {
      db.query(`ATTACH DATABASE ? AS earlier_${i}`).run(path)
      name = `earlier_${i}`
      if (db.query(`SELECT 1 FROM ${name}.sqlite_master WHERE type = 'table' AND name = 'receipts'`).get()) {
        attached.push(name)
        name = undefined
      }
    } catch {
      // Not a database, damaged, unreadable: its service's own start says so.
    } finally {
      if (name) db.exec(`DETACH DATABASE ${name}`)
    }
  }
  try {
    return db.transaction(() => {
      if (exists()) return 0
      db.exec(expiringSchema('key_claims', CLAIM_COLUMNS))
      let claimed = 0
      for (const name of attached) {
        claimed += db.query(`INSERT OR IGNORE INTO key_claims (scope, key, fingerprint, created_at)
          SELECT scope, key, fingerprint, created_at FROM ${name}.receipts WHERE created_at >= ?`).run(since).changes
      }
      return claimed
    }).immediate()
  } finally {
    for (const name of attached) db.exec(`DETACH DATABASE ${name}`)
  }
}
