import type { ApplyScans, ApplyScanTexts } from '@lr/proto'
import { log } from '@lr/platform/log'
import { forgetThreadHeap, reportThreadHeap, secondsSince, sqliteCheckpointFailures, storeDuration } from '@lr/platform/metrics'
import { basename } from 'node:path'
import { CHECKPOINT_EVERY_MS, type CheckpointFailure, filesToCheckpoint, HANDED_OVER_AUTOCHECKPOINT_PAGES, sqlitePathOf } from '@lr/platform/sqlite'
import type { IngestResult } from './ingest'
import { reportIngest } from './ingest-report'
import { ANALYTICS_STORE } from './ports'

/**
 * `texts` are the batch as JSON texts, each an array of scan events: a string crosses to a worker
 * far cheaper than 1000 objects, and the in-process bus's batches arrive as text already.
 */
export interface IngestRequest { type: 'ingest'; id: number; texts: readonly string[] }
/** `heapUsed`: the Worker's own heap in use, on an answer at most once a second (process_heap_used_bytes). */
export type IngestReply = (({ id: number } & IngestResult) | { id: number; error: IngestError }) & { heapUsed?: number }
/** The ingestion Worker's name in lr_thread_heap_used_bytes. */
const INGEST_THREAD = 'ingest'
/** A failed batch's error: an Error does not cross threads whole, and its class and code are what tell an unusable store (SQLITE_FULL). */
export interface IngestError { name: string; message: string; code?: string }
export type WorkerControl = { type: 'open'; dataDir: string } | { type: 'close' }
/** The files whose checkpoints this thread handed over (platform/src/sqlite.ts): no answer. */
export interface CheckpointRequest { type: 'checkpoint'; paths: readonly string[] }
export type WorkerControlReply = { type: 'opened' | 'closed'; error?: string }
/** The handed-over files the Worker could not checkpoint this time. */
export interface CheckpointFailed { type: 'checkpoint-failed'; failures: CheckpointFailure[] }

/** A file's failing checkpoints are logged at most once in this long (each is counted). */
export const CHECKPOINT_FAILURE_LOG_EVERY_MS = 60_000

export interface IngestInWorkerOptions {
  /**
   * What a batch the Worker could not write rejects with: the analytics store's OpenedStore.failed,
   * so a Worker's SQLITE_FULL, _IOERR, _READONLY, _BUSY is a 503, logged as the store's, and marks
   * the store unready as the same error on this thread does (platform/src/store-metrics.ts).
   * Default: the error itself.
   */
  failed?: (error: Error) => unknown
}

/** The Worker's error again as an Error of its class and code (errorFields names both in log lines). */
const errorOf = ({ name, message, code }: IngestError): Error => Object.assign(new Error(`scan ingestion failed: ${message}`), { name }, code === undefined ? {} : { code })

/**
 * One-process mode: scan batches are applied by a Worker, so the SQLite writes of ingestion run
 * on the second core instead of the thread that answers redirects and API calls (the benchmark's
 * profile: three quarters of the resolver's busy time was ingestion). Each batch resolves once
 * the worker committed it, exactly like an in-thread apply, so the scan source's retry and
 * stop semantics are unchanged. The Worker writes `analytics.sqlite` under `dataDir` (STORE=sqlite
 * only); a malformed event it drops is logged here, where the process's logger is. It is also
 * the thread that checkpoints the SQLite files this thread handed over (checkpointElsewhere in
 * platform/src/sqlite.ts, which `bun start` calls): it has a core and SQLite loaded already, where
 * a Worker of their own would add a VM (about 5 MiB) to the product's memory.
 */
export async function ingestInWorker(dataDir: string, opts: IngestInWorkerOptions = {}): Promise<{ apply: ApplyScans; applyTexts: ApplyScanTexts; close(): Promise<void> }> {
  const failed = opts.failed ?? ((error: Error) => error)
  const worker = new Worker(new URL('./ingest-worker.ts', import.meta.url).href)
  const waiting = new Map<number, { resolve(): void; reject(error: Error): void }>()
  let next = 0
  let control: ((reply: WorkerControlReply) => void) | undefined
  const reportCheckpointFailures = checkpointFailureReporter()
  worker.onmessage = ({ data }: MessageEvent<IngestReply | WorkerControlReply | CheckpointFailed>) => {
    if ('type' in data) return data.type === 'checkpoint-failed' ? reportCheckpointFailures(data.failures) : control?.(data)
    if (data.heapUsed !== undefined) reportThreadHeap(INGEST_THREAD, data.heapUsed)
    const pending = waiting.get(data.id)
    waiting.delete(data.id)
    if ('error' in data) return pending?.reject(failed(errorOf(data.error)) as Error)
    reportIngest(data)
    pending?.resolve()
  }
  // A dead worker must not leave batches waiting forever: the scan source retries what failed.
  worker.onerror = (event) => {
    for (const pending of waiting.values()) pending.reject(new Error(`scan ingestion worker failed: ${event.message}`))
    waiting.clear()
  }
  const roundTrip = (message: WorkerControl) =>
    new Promise<void>((resolve, reject) => {
      control = (reply) => (reply.error ? reject(new Error(`scan ingestion worker: ${reply.error}`)) : resolve())
      worker.postMessage(message)
    })
  try {
    await roundTrip({ type: 'open', dataDir })
  } catch (error) {
    worker.terminate()
    throw error
  }
  // Not the analytics file: the Worker writes it, so its own connection checkpoints it as it commits.
  const own = sqlitePathOf(dataDir, ANALYTICS_STORE)
  const checkpoints = setInterval(() => {
    const paths = filesToCheckpoint().filter((path) => path !== own)
    if (paths.length > 0) worker.postMessage({ type: 'checkpoint', paths } satisfies CheckpointRequest)
  }, CHECKPOINT_EVERY_MS)
  checkpoints.unref()
  const applyTexts: ApplyScanTexts = (texts) => {
    const started = performance.now()
    // The Worker's own store metrics stay in its thread, which no /metrics reads: the batch's
    // write is timed here instead, as this thread waits for it.
    const observe = (outcome: 'ok' | 'error') => storeDuration.observe({ store: ANALYTICS_STORE, operation: 'applyScans', outcome }, secondsSince(started))
    return new Promise<void>((resolve, reject) => {
      const id = next++
      waiting.set(id, {
        resolve: () => (observe('ok'), resolve()),
        reject: (error) => (observe('error'), reject(error)),
      })
      worker.postMessage({ type: 'ingest', id, texts } satisfies IngestRequest)
    })
  }
  return {
    apply: (events) => applyTexts([JSON.stringify(events)], events.length),
    applyTexts,
    async close() {
      clearInterval(checkpoints)
      await roundTrip({ type: 'close' })
      worker.terminate()
      forgetThreadHeap(INGEST_THREAD)
    },
  }
}

/**
 * A file whose checkpoints keep failing costs a WAL up to its own connection's bound, then
 * checkpoints on the API's thread again: nothing is lost, but an operator should know (a file
 * the Worker cannot open, a failing disk; one removed after the Worker opened it is checkpointed
 * all the same, and its store's readiness reports it). Each failure is counted; a file's are
 * logged once a minute, not every 50 ms.
 */
function checkpointFailureReporter() {
  const loggedAt = new Map<string, number>()
  return (failures: readonly CheckpointFailure[]) => {
    for (const { path, error } of failures) {
      sqliteCheckpointFailures.inc({ file: basename(path) })
      const last = loggedAt.get(path)
      if (last !== undefined && Date.now() - last < CHECKPOINT_FAILURE_LOG_EVERY_MS) continue
      loggedAt.set(path, Date.now())
      // Under `err`, as every line about an error (its message is all that crossed from the Worker).
      log().warn({ file: path, err: { type: 'SQLiteError', message: error } }, `could not checkpoint a SQLite file from the ingestion Worker (its own connection still does, once its WAL passes ${HANDED_OVER_AUTOCHECKPOINT_PAGES} pages)`)
    }
  }
}
