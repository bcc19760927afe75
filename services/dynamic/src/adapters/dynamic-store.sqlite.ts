import type { Database } from 'bun:sqlite'
import { seqOf } from '@lr/platform/sqlite'
import { type ListOptions } from '@lr/proto'
import type { Receipt } from '@lr/proto'
import { sqliteReceipts } from '@lr/platform/idempotency-sqlite'
import { CodeTakenError, type DynamicPatch, type DynamicStore, type StoredDynamic } from '../ports'

// `code` UNIQUE is what keeps a code unique forever: a soft delete only sets deleted_at, the row
// stays. AUTOINCREMENT: a seq is never reused, so a cursor holding it can never skip a later insert.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS dynamic_codes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  code TEXT NOT NULL UNIQUE,
  library TEXT NOT NULL,
  destination_url TEXT NOT NULL,
  name TEXT NOT NULL,
  style TEXT NOT NULL,
  status TEXT NOT NULL,
  team_id TEXT,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER
);
CREATE INDEX IF NOT EXISTS dynamic_codes_library_seq ON dynamic_codes (library, seq);`

const FIELDS = 'code, destination_url, name, style, status, team_id, created_by, created_at, updated_at'
const LIVE = 'library = $library AND code = $code AND deleted_at IS NULL'

type Row = Omit<StoredDynamic, 'style'> & { style: string; seq?: number }

const toRecord = ({ seq: _seq, ...row }: Row): StoredDynamic => ({ ...row, style: JSON.parse(row.style) })
const isCodeClash = (error: unknown) =>
  (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE' && /dynamic_codes\.code/.test(String((error as Error).message))

/** A DynamicStore in an embedded SQLite database (see openSqlite); creates its table if needed. */
export function createSqliteDynamicStore(db: Database): DynamicStore {
  db.exec(SCHEMA)
  const insert = db.prepare(
    `INSERT INTO dynamic_codes (library, ${FIELDS}) VALUES ($library, $code, $destination_url, $name, $style, $status, $team_id, $created_by, $created_at, $updated_at)`,
  )
  const receipts = sqliteReceipts(db)
  const insertAll = db.transaction((library: string, records: StoredDynamic[], receipt?: Receipt) => {
    for (const record of records) {
      try {
        insert.run({ ...record, library, style: JSON.stringify(record.style) })
      } catch (error) {
        throw isCodeClash(error) ? new CodeTakenError(record.code) : error
      }
    }
    if (receipt) receipts.write(receipt)
  })
  const getOne = db.prepare<Row, { library: string; code: string }>(`SELECT ${FIELDS} FROM dynamic_codes WHERE ${LIVE}`)
  const page = db.prepare<Row, { library: string; after: number; since: number | null; status: string | null; limit: number }>(
    `SELECT seq, ${FIELDS} FROM dynamic_codes
     WHERE library = $library AND seq > $after AND deleted_at IS NULL
       AND ($since IS NULL OR updated_at >= $since) AND ($status IS NULL OR status = $status)
     ORDER BY seq LIMIT $limit`,
  )
  const patch = db.prepare<Row, Record<string, string | number | null>>(
    `UPDATE dynamic_codes SET destination_url = coalesce($destination_url, destination_url), name = coalesce($name, name),
       status = coalesce($status, status), style = coalesce($style, style), updated_at = $updated_at
     WHERE ${LIVE} RETURNING ${FIELDS}`,
  )
  const remove = db.prepare<Row, { library: string; code: string; at: number }>(
    `UPDATE dynamic_codes SET deleted_at = $at, updated_at = $at WHERE ${LIVE} RETURNING ${FIELDS}`,
  )
  const codePage = db.prepare<{ seq: number; code: string }, [string, number, number]>(
    'SELECT seq, code FROM dynamic_codes WHERE library = ? AND seq > ? AND deleted_at IS NULL ORDER BY seq LIMIT ?',
  )
  const findOne = db.prepare<{ code: string; deleted: number }, { library: string; code: string }>(
    'SELECT code, deleted_at IS NOT NULL AS deleted FROM dynamic_codes WHERE library = $library AND code = $code',
  )
  const lookup = db.prepare<{ code: string; destination_url: string; status: 'active' | 'draft'; deleted: number }, [string]>(
    'SELECT code, destination_url, status, deleted_at IS NOT NULL AS deleted FROM dynamic_codes WHERE code = ?',
  )

  return {
    async insertMany(library, records, receipt) {
      insertAll(library, records, receipt)
    },

    findReceipt: receipts.findReceipt,

    async get(library, code) {
      const row = getOne.get({ library, code })
      return row ? toRecord(row) : null
    },

    async list(library, options: ListOptions) {
      const after = options.after === undefined ? 0 : seqOf(options.after)
      const rows = page.all({ library, after, since: options.updatedSince ?? null, status: options.status ?? null, limit: options.limit + 1 })
      const more = rows.length > options.limit
      if (more) rows.pop()
      return { items: rows.map(toRecord), next: more ? rows[rows.length - 1]!.seq!.toString(16) : null }
    },

    async update(library, code, changes: DynamicPatch, updatedAt) {
      const row = patch.get({
        library,
        code,
        destination_url: changes.destination_url ?? null,
        name: changes.name ?? null,
        status: changes.status ?? null,
        style: changes.style === undefined ? null : JSON.stringify(changes.style),
        updated_at: updatedAt,
      })
      return row ? toRecord(row) : null
    },

    async softDelete(library, code, deletedAt) {
      const row = remove.get({ library, code, at: deletedAt })
      return row ? toRecord(row) : null
    },

    async resolve(code) {
      const row = lookup.get(code)
      return row ? { ...row, deleted: row.deleted === 1 } : null
    },

    async liveCodes(library, options) {
      const rows = codePage.all(library, options.after === undefined ? 0 : seqOf(options.after), options.limit + 1)
      const more = rows.length > options.limit
      if (more) rows.pop()
      return { items: rows.map((r) => r.code), next: more ? rows[rows.length - 1]!.seq.toString(16) : null }
    },

    async findCode(library, code) {
      const row = findOne.get({ library, code })
      return row ? { code: row.code, deleted: row.deleted === 1 } : null
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
