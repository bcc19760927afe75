import { Database } from 'bun:sqlite'
import { csvChunkOf } from '@lr/platform/csv-format'
import { createSqliteExportReader } from './adapters/sqlite-export'
import type { ExportChunkReply, ExportChunkRequest, ExportControl, ExportControlReply } from './export-in-worker'

/**
 * Worker side of createExportWorker: a read-only connection of its own to the store's SQLite file
 * (WAL lets it read while the service writes) and the store's own export reader and CSV chunking.
 *
 * It loads only those (bun:sqlite, the reader, fast-csv's cell formatter): a Worker is a VM of
 * its own, and every module it loads is resident twice (the ingestion Worker's note, in
 * services/analytics/src/ingest-worker.ts).
 *
 * Reading ahead: once a chunk is answered, the next one of the same export is made at once,
 * while the main thread writes this one out; the request for it is then answered from it. It is
 * used only when no other connection committed since it was read (`PRAGMA data_version`
 * changes when one did), so an export sees exactly what it would have seen without it. One
 * chunk is kept: a second export running at the same time costs the first its chunk ahead, not
 * its correctness.
 */
declare const self: Worker
let db: Database | undefined
let read: ReturnType<typeof createSqliteExportReader> | undefined
let dataVersion: (() => number) | undefined
let ahead: { key: string; version: number; csv: string; next: string | null; rows: number; readSeconds: number } | undefined

const keyOf = (request: Pick<ExportChunkRequest, 'library' | 'after' | 'first'>) => `${request.first ? 1 : 0}:${request.after}:${request.library}`
type Made = { csv: string; next: string | null; rows: number; readSeconds: number } | { error: string; readSeconds: number }

/**
 * One chunk, or why it could not be made, with the seconds its store reads took: the main thread
 * observes them as the store's own (store metrics), since its store never saw these reads.
 */
async function chunkOf(request: Pick<ExportChunkRequest, 'library' | 'after' | 'first' | 'shape'>): Promise<Made> {
  let readSeconds = 0
  const timedRead = (limit: number) => {
    const started = performance.now()
    try {
      return read!(request.library, request.after, limit)
    } finally {
      readSeconds += (performance.now() - started) / 1000
    }
  }
  try {
    return { ...(await csvChunkOf(request.shape, timedRead, request.first)), readSeconds }
  } catch (error) {
    return { error: (error as Error)?.message ?? String(error), readSeconds }
  }
}

function open(message: ExportControl): void {
  db = new Database(message.path, { readonly: true, strict: true })
  db.exec('PRAGMA busy_timeout = 5000')
  read = createSqliteExportReader(db, message.kind)
  const version = db.prepare<{ data_version: number }, []>('PRAGMA data_version')
  dataVersion = () => version.get()!.data_version
}

async function answer(request: ExportChunkRequest): Promise<void> {
  const key = keyOf(request)
  const kept = ahead?.key === key && ahead.version === dataVersion!() ? ahead : undefined
  ahead = undefined
  const chunk = kept ?? (await chunkOf(request))
  if ('error' in chunk) return self.postMessage({ id: request.id, ...chunk } satisfies ExportChunkReply)
  const heapUsed = process.memoryUsage().heapUsed // with the chunk's text still held: the export's peak
  self.postMessage({ id: request.id, csv: chunk.csv, next: chunk.next, rows: chunk.rows, ahead: kept !== undefined, readSeconds: chunk.readSeconds, heapUsed } satisfies ExportChunkReply)
  if (chunk.next === null) return
  // The version before the read: a commit while reading makes the chunk unusable, never stale.
  const next = { library: request.library, after: Number.parseInt(chunk.next, 16), first: false, shape: { ...request.shape, start: chunk.rows } }
  const version = dataVersion!()
  const made = await chunkOf(next)
  // One that failed is not kept: the request for it reads again and answers the error.
  if (!('error' in made)) ahead = { key: keyOf(next), version, ...made }
}

self.onmessage = ({ data }: MessageEvent<ExportChunkRequest | ExportControl>) => {
  if (data.type === 'chunk') return void answer(data)
  let reply: ExportControlReply = { type: 'opened' }
  try {
    open(data)
  } catch (error) {
    reply = { type: 'opened', error: (error as Error)?.message ?? String(error) }
  }
  self.postMessage(reply)
}
