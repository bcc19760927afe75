import type { Database } from 'bun:sqlite'
import { type ListOptions, type Receipt, StoreConflict } from '@lr/proto'
import { sqliteReceipts } from '@lr/platform/idempotency-sqlite'
import { seqOf } from '@lr/platform/sqlite'
import type { LibraryStore, RecordBase } from '../ports'

/** Where and how one kind of record lives in SQLite. */
export interface SqliteKind {
  table: string
  idField: string
  urlField: string
  /** Soft delete: rows stay with deleted_at set, so an id is never issued again. */
  softDelete: boolean
}

// `id UNIQUE` is what keeps an id unique for ever (a soft delete only sets deleted_at, the row
// stays). AUTOINCREMENT: a seq is never reused, even after the newest row is deleted, so a
// cursor holding it can never skip a later insert. SQLite has one writer, so seq order is commit order.
const schemaOf = ({ table, idField, urlField, softDelete }: SqliteKind) => `
CREATE TABLE IF NOT EXISTS ${table} (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  ${idField} TEXT NOT NULL UNIQUE,
  library TEXT NOT NULL,
  ${urlField} TEXT NOT NULL,
  name TEXT NOT NULL,
  style TEXT NOT NULL,
  status TEXT NOT NULL,
  team_id TEXT,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL${softDelete ? ',\n  deleted_at INTEGER' : ''}
);
CREATE INDEX IF NOT EXISTS ${table}_library_seq ON ${table} (library, seq);`

type Row = Record<string, string | number | null> & { style: string; seq?: number }

/**
 * The LibraryStore of one kind in an embedded SQLite database (see openSqlite); creates its
 * table if needed. A kind's own queries (dynamic's directory) run on the same `db` and `table`.
 */
export function createSqliteLibraryStore<R extends RecordBase, P extends Partial<R>>(db: Database, kind: SqliteKind): LibraryStore<R, P> {
  const { table, idField, urlField, softDelete } = kind
  db.exec(schemaOf(kind))
  const FIELDS = `${idField}, ${urlField}, name, style, status, team_id, created_by, created_at, updated_at`
  const LIVE = `library = $library AND ${idField} = $id${softDelete ? ' AND deleted_at IS NULL' : ''}`
  const toRecord = ({ seq: _seq, ...row }: Row) => ({ ...row, style: JSON.parse(row.style) }) as unknown as R
  const isIdClash = (error: unknown) =>
    (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE' && String((error as Error).message).includes(`${table}.${idField}`)

  const insert = db.prepare(
    `INSERT INTO ${table} (library, ${FIELDS}) VALUES ($library, $${idField}, $${urlField}, $name, $style, $status, $team_id, $created_by, $created_at, $updated_at)`,
  )
  const receipts = sqliteReceipts(db)
  const insertAll = db.transaction((library: string, records: R[], receipt?: Receipt) => {
    for (const record of records) {
      try {
        insert.run({ ...record, library, style: JSON.stringify(record.style) } as never)
      } catch (error) {
        throw isIdClash(error) ? new StoreConflict(idField, (record as unknown as Record<string, string>)[idField]) : error
      }
    }
    if (receipt) receipts.write(receipt)
  })
  const getOne = db.prepare<Row, { library: string; id: string }>(`SELECT ${FIELDS} FROM ${table} WHERE ${LIVE}`)
  const page = db.prepare<Row, { library: string; after: number; since: number | null; status: string | null; limit: number }>(
    `SELECT seq, ${FIELDS} FROM ${table}
     WHERE library = $library AND seq > $after${softDelete ? ' AND deleted_at IS NULL' : ''}
       AND ($since IS NULL OR updated_at >= $since) AND ($status IS NULL OR status = $status)
     ORDER BY seq LIMIT $limit`,
  )
  const patch = db.prepare<Row, Record<string, string | number | null>>(
    `UPDATE ${table} SET ${urlField} = coalesce($url, ${urlField}), name = coalesce($name, name),
       status = coalesce($status, status), style = coalesce($style, style), updated_at = $updated_at
     WHERE ${LIVE} RETURNING ${FIELDS}`,
  )
  const remove = db.prepare<Row, { library: string; id: string; at: number }>(softDelete
    ? `UPDATE ${table} SET deleted_at = $at, updated_at = $at WHERE ${LIVE} RETURNING ${FIELDS}`
    : `DELETE FROM ${table} WHERE ${LIVE} RETURNING ${FIELDS}`)

  return {
    async insertMany(library, records, receipt) {
      insertAll(library, records, receipt)
    },

    findReceipt: receipts.findReceipt,

    async get(library, id) {
      const row = getOne.get({ library, id })
      return row ? toRecord(row) : null
    },

    async list(library, options: ListOptions) {
      const after = options.after === undefined ? 0 : seqOf(options.after)
      const rows = page.all({ library, after, since: options.updatedSince ?? null, status: options.status ?? null, limit: options.limit + 1 })
      const more = rows.length > options.limit
      if (more) rows.pop()
      return { items: rows.map(toRecord), next: more ? rows[rows.length - 1]!.seq!.toString(16) : null }
    },

    async update(library, id, changes, updatedAt) {
      const row = patch.get({
        library,
        id,
        url: (changes as Record<string, string | undefined>)[urlField] ?? null,
        name: changes.name ?? null,
        status: changes.status ?? null,
        style: changes.style === undefined ? null : JSON.stringify(changes.style),
        updated_at: updatedAt,
      })
      return row ? toRecord(row) : null
    },

    async delete(library, id, deletedAt) {
      const row = remove.get({ library, id, at: deletedAt })
      return row ? toRecord(row) : null
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
