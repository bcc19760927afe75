import type { Database } from 'bun:sqlite'
import { type ListOptions, type Receipt, StoreConflict, type Tombstone } from '@lr/proto'
import { sqliteReceipts } from '@lr/platform/idempotency-sqlite'
import { addMissingColumns } from '@lr/platform/sqlite'
import { seqOf } from '@lr/platform/cursor'
import { isFiltered } from '../list-order'
import { type LibraryStore, type OwnFields, type RecordBase, type SqliteKind, tombstoneOf } from '../ports'
import { filteredPage, tagSchemaOf } from './sqlite-list'
import { latestOf, recordsAt } from './change-times'
import { createGroupCommit } from './group-commit'
import { createSinceBound } from './since-bound'
import { createSqliteExportReader, fieldListOf } from './sqlite-export'
import { migrationStarted } from './migration-log'
import { log } from '@lr/platform/log'

export type { SqliteKind } from '../ports'

// `id UNIQUE` is what keeps an id unique for ever (a delete only sets deleted_at, the row stays
// as a tombstone). AUTOINCREMENT: a seq is never reused, even after the newest row is deleted,
// so a cursor holding it can never skip a later insert. `rev`, the change position, is drawn
// from the same sequence (sqlite_sequence) on every change; an insert takes the next number for
// both. SQLite has one writer, so the order of both is commit order.
const schemaOf = ({ table, idField, urlField }: SqliteKind) => `
CREATE TABLE IF NOT EXISTS ${table} (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  ${idField} TEXT NOT NULL UNIQUE,
  library TEXT NOT NULL,
  ${urlField} TEXT NOT NULL,
  name TEXT NOT NULL,
  style TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL,
  team_id TEXT,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER,
  rev INTEGER
);
CREATE INDEX IF NOT EXISTS ${table}_library_seq ON ${table} (library, seq);`

/** The columns tables made before tombstones (static: hard deletes), change positions and tags lack. */
const LATER_COLUMNS = { deleted_at: 'INTEGER', rev: 'INTEGER', tags: "TEXT NOT NULL DEFAULT '[]'" }
/**
 * What came with change positions and tags: the change index, the tag table, its triggers, the
 * sort indexes; and the index of rows without `rev` (placeLateRows), empty unless a release
 * before change positions wrote to the file: it keeps that check, at every start, off the table
 * itself, which it read whole (620 MB for a million records).
 */
const laterSchemaOf = (table: string) => `CREATE INDEX IF NOT EXISTS ${table}_library_rev ON ${table} (library, rev);
CREATE INDEX IF NOT EXISTS ${table}_no_rev ON ${table} (seq) WHERE rev IS NULL;${tagSchemaOf(table)}`

/**
 * What `migrate` would add to a table with rows: its missing columns and schema objects. On a
 * table of an older release that is every row rewritten and five indexes built, which is logged.
 */
function missingFrom(db: Database, table: string): string[] {
  const columns = new Set(db.query<{ name: string }, []>(`PRAGMA table_info(${table})`).all().map((c) => c.name))
  const objects = new Set(db.query<{ name: string }, []>('SELECT name FROM sqlite_master').all().map((o) => o.name))
  const laterObjects = [...laterSchemaOf(table).matchAll(/CREATE (?:TABLE|INDEX|TRIGGER) IF NOT EXISTS (\w+)/g)].map((m) => m[1]!)
  return [...Object.keys(LATER_COLUMNS).filter((c) => !columns.has(c)), ...laterObjects.filter((o) => !objects.has(o))]
}

/**
 * Tables made before tombstones, change positions and tags get their columns, positions and
 * indexes. With rows to change, it logs its start and returns what logs its end, which the
 * caller calls once the transaction has committed (migration-log.ts).
 */
function migrate(db: Database, table: string): (() => void) | undefined {
  const adding = missingFrom(db, table)
  const records = adding.length === 0 ? 0 : db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n
  const done = records > 0 ? migrationStarted({ store: table, records, adding }) : undefined
  const added = addMissingColumns(db, table, LATER_COLUMNS)
  if (added.includes('rev')) db.exec(`UPDATE ${table} SET rev = seq`)
  db.exec(laterSchemaOf(table))
  return done
}

/**
 * Rows without `rev` once the column is there: inserted by a release before change positions
 * (before 9b5b966) after this one had added it (an old process beside this one on DATA_DIR, or a
 * rollback). Left so, no list of changes ever had them. Each gets the sequence's next position,
 * as a change would, and an updated_at no earlier than the table's latest: a sync by
 * `updated_since` meets it. Read from the partial index `<table>_no_rev` (laterSchemaOf), not the table.
 */
function placeLateRows(db: Database, table: string) {
  const late = db.query<{ seq: number }, []>(`SELECT seq FROM ${table} WHERE rev IS NULL ORDER BY seq`).all()
  if (late.length === 0) return
  log().warn({ store: table, records: late.length }, 'records without a change position (written by a release before 9b5b966 after this one had opened the file) get one now, as a change')
  const latest = db.query<{ t: number }, []>(`SELECT max(updated_at) AS t FROM ${table}`).get()!.t
  const next = db.prepare<{ seq: number }, []>(`UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = '${table}' RETURNING seq`)
  const place = db.prepare(`UPDATE ${table} SET rev = ?, updated_at = max(updated_at, ?) WHERE seq = ?`)
  for (const { seq } of late) place.run(next.get()!.seq, latest, seq)
}

type Row = Record<string, string | number | null> & { style: string; tags: string; seq?: number; rev?: number; deleted_at?: number | null }
type Params = Record<string, string | number | null>

/**
 * The LibraryStore of one kind in an embedded SQLite database (see openSqlite); creates its
 * table if needed. A kind's own queries (dynamic's directory) run on the same `db` and `table`.
 */
export function createSqliteLibraryStore<R extends RecordBase, P extends Partial<R>>(db: Database, kind: SqliteKind): LibraryStore<R, P> {
  const { table, idField, urlField } = kind
  const extra = kind.extra ?? {}
  const extraFields = Object.keys(extra)
  const ownFields = new Set(extraFields)
  // Immediate: several connections opening one file at once must not add a column twice.
  const migrated = db.transaction(() => {
    db.exec(schemaOf(kind))
    const done = migrate(db, table)
    placeLateRows(db, table)
    addMissingColumns(db, table, Object.fromEntries(extraFields.map((f) => [f, extra[f] === 'number' ? 'INTEGER' : 'TEXT'])))
    return done
  }).immediate()
  migrated?.()
  const FIELDS = fieldListOf(kind)
  const PENDING = 'pending_change' in extra ? '(pending_change IS NOT NULL)' : '0'
  const LIVE = `library = $library AND ${idField} = $id AND deleted_at IS NULL`
  // With $expected, a compare-and-set: the row must still be at the change the caller read (LibraryStore.update).
  const AS_READ = `($expected IS NULL OR rev = $expected)`
  // Built key by key in the row's order (the ETag hashes the JSON, so the order stays): a kind's
  // own field that is not set is left out, as it was when stored. Never `delete` a key instead:
  // that turns every record into a slow dictionary object (list pages measured 2x slower).
  const toRecord = (row: Row): R => {
    const record: Record<string, unknown> = {}
    for (const key in row) {
      const value = row[key]
      if (key === 'seq' || key === 'rev' || key === 'deleted_at') continue
      if (key === 'style') record[key] = JSON.parse(value as string)
      else if (key === 'tags') record[key] = value === '[]' ? [] : JSON.parse(value as string)
      else if (!ownFields.has(key)) record[key] = value
      else if (value != null) record[key] = extra[key] === 'json' ? JSON.parse(value as string) : value
    }
    return record as R
  }
  const readExport = createSqliteExportReader<R>(db, kind)
  /** A kind's own field as its column holds it. */
  const columnOf = (field: string, value: unknown) =>
    (value == null ? null : extra[field] === 'json' ? JSON.stringify(value) : (value as string | number))
  const extraOf = (values: Record<string, unknown>) => Object.fromEntries(extraFields.map((f) => [f, columnOf(f, values[f])]))
  const toItem = (row: Row): R | Tombstone => (row.deleted_at == null ? toRecord(row) : tombstoneOf(idField, row))
  const isIdClash = (error: unknown) =>
    (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_UNIQUE' && String((error as Error).message).includes(`${table}.${idField}`)

  // seq and rev both the sequence's next number, as AUTOINCREMENT would pick it (past the
  // sequence and the newest row); inserting an explicit seq moves sqlite_sequence on as well.
  const insert = db.prepare<unknown, Params>(
    `INSERT INTO ${table} (seq, rev, library, ${FIELDS})
     SELECT n, n, $library, $${idField}, $${urlField}, $name, $style, $status, $team_id, $created_by, $created_at, $updated_at, $tags${extraFields.map((f) => `, $${f}`).join('')}
     FROM (SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = '${table}'), 0), coalesce((SELECT max(seq) FROM ${table}), 0)) + 1 AS n)`,
  )
  const receipts = sqliteReceipts(db)
  // The latest time a change was stamped with: the next is stamped no earlier (change-times.ts).
  let latest = db.query<{ t: number }, []>(`SELECT coalesce(max(updated_at), 0) AS t FROM ${table}`).get()!.t
  const stamp = (time: number) => (latest = Math.max(latest, time))
  // The rows of one insertMany (and its receipt), run inside a transaction by the group commit;
  // `stored` gets the records as written.
  const insertRows = (library: string, given: R[], receiptOf: ((stored: R[]) => Receipt) | undefined, stored: { records: R[] }) => {
    const records = recordsAt(given, stamp(latestOf(given)))
    for (const record of records) {
      try {
        insert.run({ ...record, library, style: JSON.stringify(record.style), tags: JSON.stringify(record.tags ?? []), ...extraOf(record as unknown as Record<string, unknown>) } as never)
      } catch (error) {
        throw isIdClash(error) ? new StoreConflict(idField, (record as unknown as Record<string, string>)[idField]) : error
      }
    }
    if (receiptOf) receipts.write(receiptOf(records))
    stored.records = records
  }
  const newestChange = db.prepare<{ position: number }, [string]>(`SELECT coalesce(max(rev), 0) AS position FROM ${table} WHERE library = ?`)
  const commitTogether = createGroupCommit(db, insertRows)
  const getOne = db.prepare<Row & { rev: number }, { library: string; id: string }>(`SELECT rev, ${FIELDS} FROM ${table} WHERE ${LIVE}`)
  const page = db.prepare<Row, { library: string; after: number; since: number | null; status: string | null; pending: number | null; limit: number }>(
    `SELECT seq, ${FIELDS} FROM ${table}
     WHERE library = $library AND seq > $after AND deleted_at IS NULL
       AND ($since IS NULL OR updated_at >= $since) AND ($status IS NULL OR status = $status)
       AND ($pending IS NULL OR ${PENDING} = $pending)
     ORDER BY seq LIMIT $limit`,
  )
  const changePage = db.prepare<Row, { library: string; after: number; since: number | null; status: string | null; pending: number | null; deleted: number; limit: number }>(
    `SELECT rev, ${FIELDS}, deleted_at FROM ${table}
     WHERE library = $library AND rev > $after AND ($since IS NULL OR updated_at >= $since)
       AND CASE WHEN deleted_at IS NULL THEN ($status IS NULL OR status = $status) AND ($pending IS NULL OR ${PENDING} = $pending) ELSE $deleted END
     ORDER BY rev LIMIT $limit`,
  )
  const changesAfter = createSinceBound(db, table)
  // A kind's own field is written when the patch has it (null included): `$set_<field>` says so.
  const extraSets = extraFields.map((f) => `, ${f} = CASE WHEN $set_${f} THEN $${f} ELSE ${f} END`).join('')
  const extraParams = (changes: Record<string, unknown>): Params =>
    Object.fromEntries(extraFields.flatMap((f) => [[`set_${f}`, changes[f] === undefined ? 0 : 1], [f, columnOf(f, changes[f])]]))
  // The next position of the table's sequence: the next insert's seq comes after it.
  const nextPosition = db.prepare<{ seq: number }, []>(`UPDATE sqlite_sequence SET seq = seq + 1 WHERE name = '${table}' RETURNING seq`)
  const patch = db.prepare<Row, Params>(
    `UPDATE ${table} SET ${urlField} = coalesce($url, ${urlField}), name = coalesce($name, name),
       status = coalesce($status, status), style = coalesce($style, style), tags = coalesce($tags, tags), updated_at = $updated_at, rev = $rev${extraSets}
     WHERE ${LIVE} AND ${AS_READ} RETURNING ${FIELDS}`,
  )
  const remove = db.prepare<Row, Params>(`UPDATE ${table} SET deleted_at = $at, updated_at = $at, rev = $rev WHERE ${LIVE} AND ${AS_READ} RETURNING ${FIELDS}`)
  // With `receiptOf`, the receipt of the changed row in the same transaction (LibraryStore.update); ReceiptTaken rolls both back.
  const change = db.transaction((statement: typeof patch, params: Params, receiptOf?: (updated: R) => Receipt) => {
    const row = statement.get({ ...params, rev: nextPosition.get()?.seq ?? 0 })
    if (row && receiptOf) receipts.write(receiptOf(toRecord(row)))
    return row
  })
  // (No sequence yet: the table never had a row, so nothing matches and rev 0 is never stored.)

  const pendingOf = (options: ListOptions) => (options.pending === undefined ? null : options.pending ? 1 : 0)
  /** The rows of an unfiltered page in insert order (list and exportPage), one more than the limit when more follow. */
  const seqPage = (library: string, options: ListOptions) =>
    page.all({ library, after: options.after === undefined ? 0 : seqOf(options.after), since: options.updatedSince ?? null, status: options.status ?? null, pending: pendingOf(options), limit: options.limit + 1 })

  function pageOf<T>(rows: Row[], limit: number, position: 'seq' | 'rev', map: (row: Row) => T) {
    const more = rows.length > limit
    if (more) rows.pop()
    return { items: rows.map(map), next: more ? rows[rows.length - 1]![position]!.toString(16) : null }
  }

  return {
    async insertMany(library, records, receiptOf) {
      const stored = { records }
      await commitTogether(library, records, receiptOf, stored)
      return stored.records
    },

    findReceipt: receipts.findReceipt,

    async get(library, id) {
      const row = getOne.get({ library, id })
      return row ? { record: toRecord(row), rev: row.rev } : null
    },

    async list(library, options: ListOptions) {
      if (isFiltered(options)) {
        const { rows, next } = filteredPage(db, table, FIELDS, urlField, library, options, PENDING)
        return { items: rows.map(toRecord), next }
      }
      return pageOf(seqPage(library, options), options.limit, 'seq', toRecord)
    },

    async exportPage(library, options) {
      return readExport(library, options.after === undefined ? 0 : seqOf(options.after), options.limit)
    },

    exportFrom: db.filename && db.filename !== ':memory:' ? { path: db.filename, kind } : undefined,

    async changes(library, options: ListOptions) {
      const after = changesAfter(library, options.after === undefined ? 0 : seqOf(options.after), options.updatedSince)
      const rows = changePage.all({
        library, after, since: options.updatedSince ?? null, status: options.status ?? null, pending: pendingOf(options), deleted: options.includeDeleted ? 1 : 0, limit: options.limit + 1,
      })
      return pageOf(rows, options.limit, 'rev', toItem)
    },

    async changePosition(library) {
      return newestChange.get(library)!.position
    },

    async update(library, id, changes, updatedAt, expectedRev, receiptOf) {
      const row = change(patch, {
        library,
        id,
        url: (changes as Record<string, string | undefined>)[urlField] ?? null,
        name: changes.name ?? null,
        status: changes.status ?? null,
        style: changes.style === undefined ? null : JSON.stringify(changes.style),
        tags: changes.tags === undefined ? null : JSON.stringify(changes.tags),
        updated_at: stamp(updatedAt),
        expected: expectedRev ?? null,
        ...extraParams(changes as Record<string, unknown>),
      }, receiptOf)
      return row ? toRecord(row) : null
    },

    async delete(library, id, deletedAt, expectedRev) {
      const row = change(remove, { library, id, at: stamp(deletedAt), expected: expectedRev ?? null })
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
