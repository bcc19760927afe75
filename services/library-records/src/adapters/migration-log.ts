import { log } from '@lr/platform/log'

/** What a one-off migration of stored records is about to do: where, to how many, and what it adds. */
export interface MigrationWork {
  /** The table (SQLite) or collection (MongoDB) of one kind of record. */
  store: string
  records: number
  /** The columns, indexes, tables or fields it adds (`rev`, `tags`, `static_records_library_rev`...). */
  adding: string[]
}

/**
 * Logs a one-off migration of stored records that has records to change (an upgrade from an
 * older release): one `info` line as it starts, since the service's start waits for it (1.4 s
 * for 300,000 static records on SQLite; more on a busy machine), and one when done, with the
 * count and the seconds it took; returns the function that writes the second. A store that is
 * new or migrated already logs nothing: the caller asks only when there is work.
 */
export function migrationStarted(work: MigrationWork): () => void {
  const started = performance.now()
  log().info(work, "records migration started: stored records are brought to this release's layout once, before the service serves")
  return () => log().info({ ...work, seconds: Math.round(performance.now() - started) / 1000 }, 'records migration done')
}
