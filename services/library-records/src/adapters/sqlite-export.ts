import type { Database } from 'bun:sqlite'
import type { Page } from '@lr/proto'
import type { Exported, RecordBase, SqliteKind } from '../ports'

/** The columns a record is read from, in the order a record's keys come (its ETag hashes that order). */
export const fieldListOf = ({ idField, urlField, extra = {} }: SqliteKind): string =>
  `${idField}, ${urlField}, name, style, status, team_id, created_by, created_at, updated_at, tags${Object.keys(extra).map((f) => `, ${f}`).join('')}`

type ExportRow = Record<string, unknown> & { seq: number; tags: string | readonly string[] }
const NO_TAGS: readonly string[] = Object.freeze([])

/**
 * Reads the export form (LibraryStore.exportPage) of one kind: live records in insert order
 * from after a seq, each row as SQLite gives it with only its tags parsed. No copy per row (a
 * million of them were 5 % of an export); a row keeps its seq and its own fields' column text,
 * which no export column reads. A row without tags shares one empty list (read only by the CSV):
 * a million of them were a million allocations for the collector.
 *
 * Its own module, loading nothing but its types, so the export Worker (export-worker.ts) reads
 * with the very code the store does.
 */
export function createSqliteExportReader<R extends RecordBase>(db: Database, kind: SqliteKind): (library: string, after: number, limit: number) => Page<Exported<R>> {
  const page = db.prepare<ExportRow, { library: string; after: number; limit: number }>(
    `SELECT seq, ${fieldListOf(kind)} FROM ${kind.table}
     WHERE library = $library AND seq > $after AND deleted_at IS NULL
     ORDER BY seq LIMIT $limit`,
  )
  return (library, after, limit) => {
    const rows = page.all({ library, after, limit: limit + 1 })
    const more = rows.length > limit
    if (more) rows.pop()
    for (const row of rows) row.tags = row.tags === '[]' ? NO_TAGS : JSON.parse(row.tags as string)
    return { items: rows as unknown as Exported<R>[], next: more ? rows[rows.length - 1]!.seq.toString(16) : null }
  }
}
