import type { Database } from 'bun:sqlite'

/** How many records changed since `updated_since` are read to bound a list of changes; with more, it walks from `after`. */
const SINCE_BOUND_ROWS = 1000

/**
 * Where a page of the list of changes starts (SQLite): after `after`, and before the least
 * position of the records changed since `since` when there are few (read through the
 * (library, updated_at, seq) index). Without it each poll of the sync recipe (README "Keeping
 * another system in sync") walked the library's positions from its first change: 0.1 to 0.5 s
 * per million records for a poll that found nothing. A record changed meanwhile takes a later
 * position than any, so the bound never hides one.
 */
export function createSinceBound(db: Database, table: string) {
  const changedSince = db.prepare<{ n: number; rev: number | null }, { library: string; since: number }>(
    `SELECT count(*) AS n, min(rev) AS rev FROM (SELECT rev FROM ${table} WHERE library = $library AND updated_at >= $since LIMIT ${SINCE_BOUND_ROWS + 1})`,
  )
  return (library: string, after: number, since: number | undefined): number => {
    if (since === undefined) return after
    const { n, rev } = changedSince.get({ library, since })!
    if (n > SINCE_BOUND_ROWS) return after
    return rev === null ? Number.MAX_SAFE_INTEGER : Math.max(after, rev - 1)
  }
}
