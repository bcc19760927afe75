import type { Database } from 'bun:sqlite'
import { scansOfTexts } from '@lr/proto/scan-batch'
import { createCheckpointer, openSqlite, sqlitePathOf } from '@lr/platform/sqlite'
import { createSqliteScanWrites } from './adapters/analytics-writes.sqlite'
import { createSqliteFallbacks } from './adapters/analytics-fallbacks.sqlite'
import { createAgentCache } from './enrich'
import { createScanIngest } from './ingest'
import { ANALYTICS_STORE } from './ports'
import type { CheckpointFailed, CheckpointRequest, IngestError, IngestReply, IngestRequest, WorkerControl, WorkerControlReply } from './ingest-in-worker'

/**
 * Worker side of ingestInWorker: its own connection to the analytics SQLite file (WAL lets the
 * main thread read while this one writes) and the same ingest code the service runs elsewhere.
 *
 * It loads only the write path: the store's writes, the event's schema, the user-agent parser.
 * A Worker is a VM of its own, and every module it loads is resident twice; through the service
 * and the contract index it loaded TypeBox's every schema, pino, prom-client and fast-csv, about
 * 8 MiB more of the product's RSS. Logging and metrics stay on the main thread, which gets each
 * batch's outcome (ingest-in-worker.ts).
 */
declare const self: Worker
let db: Database | undefined
let ingest: ReturnType<typeof createScanIngest> | undefined
/** The main thread's other SQLite files, checkpointed here (platform/src/sqlite.ts, checkpointElsewhere). */
const checkpointer = createCheckpointer()

const control = (message: WorkerControl): WorkerControlReply => {
  if (message.type === 'open') {
    db = openSqlite(sqlitePathOf(message.dataDir, ANALYTICS_STORE))
    ingest = createScanIngest({ ...createSqliteScanWrites(db), ...createSqliteFallbacks(db) }, createAgentCache())
  } else {
    checkpointer.close()
    db?.close()
  }
  return { type: message.type === 'open' ? 'opened' : 'closed' }
}

/** When this Worker last told its heap: at most once a second, not with every batch. */
let heapToldAt = -Infinity
function withHeap(reply: IngestReply): IngestReply {
  if (performance.now() - heapToldAt < 1000) return reply
  heapToldAt = performance.now()
  return { ...reply, heapUsed: process.memoryUsage().heapUsed }
}

/** A failed batch's error as it can cross: its class and code with its message (SQLITE_FULL tells the main thread the store is unusable). */
function crossing(error: unknown): IngestError {
  const { name, code, message } = (error ?? {}) as { name?: unknown; code?: unknown; message?: unknown }
  return { name: typeof name === 'string' ? name : 'Error', message: typeof message === 'string' ? message : String(error), ...(typeof code === 'string' ? { code } : {}) }
}

self.onmessage = async ({ data }: MessageEvent<IngestRequest | WorkerControl | CheckpointRequest>) => {
  if (data.type === 'checkpoint') {
    const failures = checkpointer.checkpoint(data.paths)
    if (failures.length > 0) self.postMessage({ type: 'checkpoint-failed', failures } satisfies CheckpointFailed)
    return
  }
  if (data.type !== 'ingest') {
    let reply: WorkerControlReply
    try {
      reply = control(data)
    } catch (error) {
      reply = { type: data.type === 'open' ? 'opened' : 'closed', error: (error as Error)?.message ?? String(error) }
    }
    return self.postMessage(reply)
  }
  let reply: IngestReply
  try {
    reply = { id: data.id, ...(await ingest!(scansOfTexts(data.texts))) }
  } catch (error) {
    reply = { id: data.id, error: crossing(error) }
  }
  self.postMessage(withHeap(reply))
}
