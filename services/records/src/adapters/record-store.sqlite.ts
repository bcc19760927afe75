import type { Database } from 'bun:sqlite'
import { seqOf } from '@lr/platform/sqlite'
import { type ListOptions } from '@lr/proto'
import type { StaticRecord } from '@lr/proto'
import { sqliteReceipts } from '@lr/platform/idempotency-sqlite'
import type { Receipt } from '@lr/proto'
import type { RecordStore, StaticPatch } from '../ports'

// AUTOINCREMENT: a seq is never reused, even after the newest row is deleted, so a cursor
// holding it can never skip a later insert. SQLite has one writer, so seq order is commit order.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS static_records (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  qr_id TEXT NOT NULL UNIQUE,
  library TEXT NOT NULL,
  url TEXT NOT NULL,
  name TEXT NOT NULL,
  style TEXT NOT NULL,
  status TEXT NOT NULL,
  team_id TEXT,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS static_records_library_seq ON static_records (library, seq);`

const FIELDS = 'qr_id, url, name, style, status, team_id, created_by, created_at, updated_at'

type Row = Omit<StaticRecord, 'style'> & { style: string; seq?: number }

const toRecord = ({ seq: _seq, ...row }: Row): StaticRecord => ({ ...row, style: JSON.parse(row.style) })

/** A RecordStore in an embedded SQLite database (see openSqlite); creates its table if needed. */
export function createSqliteRecordStore(db: Database): RecordStore {
  db.exec(SCHEMA)
  const insert = db.prepare(
    `INSERT INTO static_records (library, ${FIELDS}) VALUES ($library, $qr_id, $url, $name, $style, $status, $team_id, $created_by, $created_at, $updated_at)`,
  )
  const receipts = sqliteReceipts(db)
  const insertAll = db.transaction((library: string, records: StaticRecord[], receipt?: Receipt) => {
    for (const record of records) insert.run({ ...record, library, style: JSON.stringify(record.style) })
    if (receipt) receipts.write(receipt)
  })
  const getOne = db.prepare<Row, [string, string]>(`SELECT ${FIELDS} FROM static_records WHERE library = ? AND qr_id = ?`)
  const page = db.prepare<Row, { library: string; after: number; since: number | null; limit: number }>(
    `SELECT seq, ${FIELDS} FROM static_records
     WHERE library = $library AND seq > $after AND ($since IS NULL OR updated_at >= $since)
     ORDER BY seq LIMIT $limit`,
  )
  const patch = db.prepare<Row, Record<string, string | number | null>>(
    `UPDATE static_records SET url = coalesce($url, url), name = coalesce($name, name),
       status = coalesce($status, status), style = coalesce($style, style), updated_at = $updated_at
     WHERE library = $library AND qr_id = $qr_id RETURNING ${FIELDS}`,
  )
  const remove = db.prepare<never, [string, string]>('DELETE FROM static_records WHERE library = ? AND qr_id = ?')

  return {
    async insertMany(library, records, receipt) {
      insertAll(library, records, receipt)
    },

    findReceipt: receipts.findReceipt,

    async get(library, qrId) {
      const row = getOne.get(library, qrId)
      return row ? toRecord(row) : null
    },

    async list(library, options: ListOptions) {
      const after = options.after === undefined ? 0 : seqOf(options.after)
      const rows = page.all({ library, after, since: options.updatedSince ?? null, limit: options.limit + 1 })
      const more = rows.length > options.limit
      if (more) rows.pop()
      return { items: rows.map(toRecord), next: more ? rows[rows.length - 1]!.seq!.toString(16) : null }
    },

    async update(library, qrId, changes: StaticPatch, updatedAt) {
      const row = patch.get({
        library,
        qr_id: qrId,
        url: changes.url ?? null,
        name: changes.name ?? null,
        status: changes.status ?? null,
        style: changes.style === undefined ? null : JSON.stringify(changes.style),
        updated_at: updatedAt,
      })
      return row ? toRecord(row) : null
    },

    async delete(library, qrId) {
      return remove.run(library, qrId).changes > 0
    },

    async ping() {
      try {
        return db.query('SELECT 1 AS ok').get() !== null
      } catch {
        return false
      }
    },
  }
}
