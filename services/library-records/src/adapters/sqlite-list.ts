import type { Database } from 'bun:sqlite'
import type { ListOptions } from '@lr/proto'
import { seqOf } from '@lr/platform/cursor'
import { parseSortPosition, type SortOrder, sortOrderOf, sortPositionText } from '../list-order'

/**
 * Tags in SQLite: the record's `tags` column (JSON text) is what `get` reads; triggers keep a
 * side table of (library, tag, seq) in step with it, whose key is the index a `tag=` filter
 * needs. Indexes of the three sort keys (with seq, the tie-breaker) keep a sorted page a
 * range read. Created with the table, and for a table made before tags (its rows read `[]`).
 */
export function tagSchemaOf(table: string) {
  return `
CREATE TABLE IF NOT EXISTS ${table}_tags (library TEXT NOT NULL, tag TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (library, tag, seq)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS ${table}_tags_insert AFTER INSERT ON ${table} BEGIN
  INSERT OR IGNORE INTO ${table}_tags (library, tag, seq) SELECT new.library, value, new.seq FROM json_each(new.tags);
END;
CREATE TRIGGER IF NOT EXISTS ${table}_tags_update AFTER UPDATE OF tags ON ${table} WHEN new.tags IS NOT old.tags BEGIN
  DELETE FROM ${table}_tags WHERE library = old.library AND seq = old.seq;
  INSERT OR IGNORE INTO ${table}_tags (library, tag, seq) SELECT new.library, value, new.seq FROM json_each(new.tags);
END;
CREATE INDEX IF NOT EXISTS ${table}_library_name ON ${table} (library, name, seq);
CREATE INDEX IF NOT EXISTS ${table}_library_created ON ${table} (library, created_at, seq);
CREATE INDEX IF NOT EXISTS ${table}_library_updated ON ${table} (library, updated_at, seq);`
}

type Row = Record<string, string | number | null> & { style: string; tags: string; seq?: number }

/**
 * A page of the list with `tags`, `search` or `sort` (LibraryStore.list): live records of the
 * library matching every filter (status and pending too), by (sort key, seq) or by seq alone, strictly after `after`.
 * Rows come with their seq; `next` is the position of the last one when more follow.
 */
export function filteredPage(db: Database, table: string, fields: string, urlField: string, library: string, options: ListOptions, pendingSql: string): { rows: Row[]; next: string | null } {
  const where = ['library = $library', 'deleted_at IS NULL']
  const params: Record<string, string | number> = { $library: library, $limit: options.limit + 1 }
  if (options.status !== undefined) {
    where.push('status = $status')
    params.$status = options.status
  }
  if (options.pending !== undefined) {
    // pendingSql: the kind's "has a pending change" expression (the store's PENDING).
    where.push(`${pendingSql} = $pending`)
    params.$pending = options.pending ? 1 : 0
  }
  if (options.updatedSince !== undefined) {
    where.push('updated_at >= $since')
    params.$since = options.updatedSince
  }
  if (options.tags?.length) {
    // One list of the records carrying every tag, merged from each tag's range of the key. One
    // `seq IN (...)` per tag had SQLite probe the table for every pair of the lists' entries: two
    // tags of 100,000 and 50,000 records of a library of a million held the process for minutes.
    const each = options.tags.map((tag, i) => {
      params[`$tag${i}`] = tag
      return `SELECT seq FROM ${table}_tags WHERE library = $library AND tag = $tag${i}`
    })
    where.push(`seq IN (${each.join(' INTERSECT ')})`)
  }
  if (options.search !== undefined) {
    // lower() of SQLite folds ASCII letters only: `search` came folded the same way (list-order.ts).
    where.push(`(instr(lower(name), $search) > 0 OR instr(lower(${urlField}), $search) > 0)`)
    params.$search = options.search
  }
  const order = options.sort === undefined ? undefined : sortOrderOf(options.sort)
  if (order) {
    if (options.after !== undefined) return sortedPageAfter(db, table, fields, where, params, order, options)
  } else if (options.after !== undefined) {
    where.push('seq > $after')
    params.$after = seqOf(options.after)
  }
  const direction = order?.descending ? 'DESC' : 'ASC'
  const orderBy = order ? `${order.field} ${direction}, seq ${direction}` : 'seq'
  const rows = db.query<Row, [Record<string, string | number>]>(`SELECT seq, ${fields} FROM ${table} WHERE ${where.join(' AND ')} ORDER BY ${orderBy} LIMIT $limit`).all(params)
  return pageOf(rows, options.limit, order)
}

type Order = SortOrder

/** The page's rows without the one that only says more follow, and the position of its last row then. */
function pageOf(rows: Row[], limit: number, order: Order | undefined) {
  const more = rows.length > limit
  if (more) rows.pop()
  const last = rows[rows.length - 1]
  const next = !more || !last ? null : order ? sortPositionText(last.seq!, order.field, last[order.field]) : last.seq!.toString(16)
  return { rows, next }
}

/**
 * A sorted page after a cursor: first the rest of the cursor's key (same key, later seq), then
 * the keys after it, each an exact seek of the (library, key, seq) index. One `(key, seq) >
 * (?, ?)` seeks the key alone and reads every record sharing it: a library of a million
 * records of one name read them all for each page of `sort=name` (84 ms a page, the walk's
 * cost growing as the square of the library). In one read transaction: one state of the table.
 */
function sortedPageAfter(db: Database, table: string, fields: string, where: string[], params: Record<string, string | number>, order: Order, options: ListOptions) {
  const { position, key } = parseSortPosition(options.after!, order.field)
  const [beyond, direction] = order.descending ? ['<', 'DESC'] : ['>', 'ASC']
  const select = (condition: string, orderBy: string, bound: Record<string, string | number>) =>
    db.query<Row, [Record<string, string | number>]>(`SELECT seq, ${fields} FROM ${table} WHERE ${[...where, condition].join(' AND ')} ORDER BY ${orderBy} LIMIT $limit`)
      .all({ ...params, ...bound })
  const rows = db.transaction(() => {
    const ties = select(`${order.field} = $key AND seq ${beyond} $after`, `seq ${direction}`, { $key: key, $after: position })
    if (ties.length > options.limit) return ties
    const after = select(`${order.field} ${beyond} $key`, `${order.field} ${direction}, seq ${direction}`, { $key: key, $limit: options.limit + 1 - ties.length })
    return ties.concat(after)
  })()
  return pageOf(rows, options.limit, order)
}
