import type { ChunkShape } from '@lr/platform/csv-format'
import { errorFields, log } from '@lr/platform/log'
import { forgetThreadHeap, reportThreadHeap, storeDuration } from '@lr/platform/metrics'
import type { LibraryStore, RecordBase, SqliteExportSource, SqliteKind } from './ports'

export interface ExportChunkRequest {
  type: 'chunk'
  id: number
  library: string
  /** The seq the chunk starts after (0: the first). */
  after: number
  /** The export's first chunk: it carries the header. */
  first: boolean
  shape: ChunkShape
}
/**
 * `readSeconds`: what the chunk's store reads took in the Worker (a chunk read ahead: when it was
 * read); `heapUsed`: the Worker's heap as it answers (lr_thread_heap_used_bytes).
 */
export type ExportChunkReply = { id: number; csv: string; next: string | null; rows: number; ahead: boolean; readSeconds: number; heapUsed: number } | { id: number; error: string; readSeconds: number }
export type ExportControl = { type: 'open'; path: string; kind: SqliteKind }
export type ExportControlReply = { type: 'opened'; error?: string }

/** One chunk: its CSV, the store position after it (null: the export is done), the rows the next starts reading (csvChunkOf), and whether the Worker had read it ahead. */
type ExportChunkText = { csv: string; next: string | null; rows: number; ahead: boolean }

export interface ExportWorker {
  /** One chunk of a library's export, read and formatted by the Worker; rejects when the Worker cannot (the caller then makes it itself; the cause is logged here). */
  chunk(request: Omit<ExportChunkRequest, 'type' | 'id'>): Promise<ExportChunkText>
  /** Whether a Worker is running (it ends after EXPORT_WORKER_IDLE_MS without a chunk). */
  active(): boolean
  /** Lets chunks in flight finish and ends the Worker; later chunks reject (made on the service thread). */
  close(): Promise<void>
}

/** How long an idle Worker stays: an export asks for its next chunk within milliseconds, the next export may come much later. */
const EXPORT_WORKER_IDLE_MS = 30_000

/** After a Worker could not start (its file would not open), chunks are made on the service's thread for this long before the next try. */
const EXPORT_WORKER_RETRY_MS = 30_000
/** How long close() lets chunks in flight finish (each takes milliseconds) before it ends the Worker anyway. */
const CLOSE_WAIT_MS = 5_000

/**
 * A SQLite store's CSV export read and formatted by a Worker (export-worker.ts), so an export of a
 * million rows neither holds the thread that answers API requests and redirects for seconds nor
 * waits for it: the main thread only streams the chunks out, and the Worker reads the next chunk
 * while it does (bench/ANALYSIS.md, "Eleventh session": a 1M-row dynamic export's main thread
 * from 3.0-3.3 s to 0.3-0.4 s of CPU). Started by the first export, ended EXPORT_WORKER_IDLE_MS
 * after its last chunk, so a process that never exports never pays for its VM.
 *
 * The Worker times its store reads; each chunk's are observed here as the store's `exportPage`
 * (lr_store_operation_duration_seconds), as a read on this thread would be.
 *
 * A chunk the Worker could not make rejects, and the service makes it on its own thread. Logged
 * here, once per cause: a Worker that could not start (then none is tried for
 * EXPORT_WORKER_RETRY_MS, so a long export does not start one per chunk), one that failed or
 * ended by itself (the next chunk starts another), a chunk it could not read.
 */
export function createExportWorker(source: SqliteExportSource, opts: { store: string; idleMs?: number; retryMs?: number }): ExportWorker {
  const idleMs = opts.idleMs ?? EXPORT_WORKER_IDLE_MS
  // Its name in lr_thread_heap_used_bytes: one export Worker per store at most.
  const thread = `export-${opts.store}`
  const retryMs = opts.retryMs ?? EXPORT_WORKER_RETRY_MS
  const waiting = new Map<number, { resolve(chunk: ExportChunkText): void; reject(error: Error): void }>()
  let next = 0
  let current: { worker: Worker; ready: Promise<Worker> } | undefined
  let idle: Timer | undefined
  let retryAt = 0
  let cannotStart: Error | undefined
  let drained: (() => void) | undefined

  const settled = () => {
    if (waiting.size > 0) return
    drained?.()
    if (current) idleFrom(current.worker)
  }
  function failAll(error: Error): void {
    for (const pending of waiting.values()) pending.reject(error)
    waiting.clear()
    drained?.()
  }
  /** Ends `worker` if it is still the current one; what it had in hand fails with `error`. */
  function end(worker: Worker, error?: Error): void {
    if (current?.worker !== worker) return
    current = undefined
    clearTimeout(idle)
    worker.terminate()
    forgetThreadHeap(thread)
    if (error) failAll(error)
  }

  function start(): { worker: Worker; ready: Promise<Worker> } {
    const worker = new Worker(new URL('./export-worker.ts', import.meta.url).href)
    // Never what keeps a process alive: close() ends it, the idle timer too.
    worker.unref()
    const ready = new Promise<Worker>((resolve, reject) => {
      worker.onmessage = ({ data }: MessageEvent<ExportChunkReply | ExportControlReply>) => {
        if ('type' in data) {
          if (!data.error) return resolve(worker)
          const error = new Error(`export worker: ${data.error}`)
          log().error({ store: opts.store, path: source.path, retry_in_s: retryMs / 1000, ...errorFields(error) }, 'export worker could not start: exports are made on the service thread meanwhile')
          cannotStart = error
          retryAt = Date.now() + retryMs
          end(worker)
          return reject(error)
        }
        const pending = waiting.get(data.id)
        waiting.delete(data.id)
        // The Worker's reads are the store's too: observed as the thread's own exportPage would be
        // (withStoreMetrics), so lr_store_operation_duration_seconds shows every export read.
        storeDuration.observe({ store: opts.store, operation: 'exportPage', outcome: 'error' in data ? 'error' : 'ok' }, data.readSeconds)
        if (!('error' in data)) {
          reportThreadHeap(thread, data.heapUsed)
          pending?.resolve({ csv: data.csv, next: data.next, rows: data.rows, ahead: data.ahead })
        } else {
          const error = new Error(`export worker: ${data.error}`)
          log().error({ store: opts.store, ...errorFields(error) }, 'export worker could not make a chunk: making it on the service thread')
          pending?.reject(error)
        }
        settled()
      }
      // Failed, or ended by itself (an exit fires only `close`): what it had in hand is made on the service thread.
      const lost = (message: string) => {
        if (current?.worker !== worker) return
        const error = new Error(`export worker ${message}`)
        log().error({ store: opts.store, ...errorFields(error) }, 'export worker lost: the next export starts another')
        end(worker, error)
        reject(error)
      }
      worker.onerror = (event) => lost(`failed: ${event.message}`)
      worker.addEventListener('close', () => lost('ended'))
      worker.postMessage({ type: 'open', path: source.path, kind: source.kind } satisfies ExportControl)
    })
    ready.catch(() => undefined)
    return { worker, ready }
  }

  function idleFrom(worker: Worker): void {
    clearTimeout(idle)
    idle = setTimeout(() => {
      if (waiting.size === 0) end(worker)
    }, idleMs)
    idle.unref()
  }

  return {
    async chunk(request) {
      if (!current && Date.now() < retryAt) throw cannotStart!
      clearTimeout(idle)
      const { ready } = (current ??= start())
      // In hand from now, also while the Worker starts: close() waits for it.
      const id = next++
      const answered = new Promise<ExportChunkText>((resolve, reject) => waiting.set(id, { resolve, reject }))
      // A Worker lost while starting fails `answered` too; the caller hears it from `ready` below.
      answered.catch(() => undefined)
      let worker: Worker
      try {
        worker = await ready
      } catch (error) {
        waiting.delete(id)
        settled()
        throw error
      }
      worker.postMessage({ ...request, type: 'chunk', id } satisfies ExportChunkRequest)
      return answered
    },
    active: () => current !== undefined,
    async close() {
      clearTimeout(idle)
      retryAt = Number.POSITIVE_INFINITY
      cannotStart = new Error('export worker closed')
      // Chunks in flight finish first: the service's store closes after this.
      if (waiting.size > 0) await Promise.race([new Promise<void>((resolve) => (drained = resolve)), Bun.sleep(CLOSE_WAIT_MS)])
      const worker = current?.worker
      if (worker) end(worker, new Error('export worker closed'))
    },
  }
}

/** The export Worker of a store that can have one (LibraryStore.exportFrom: SQLite on a file); `name` names the store in its log lines. */
export const exportWorkerOf = <R extends RecordBase>(store: LibraryStore<R, unknown>, name: string): ExportWorker | undefined =>
  store.exportFrom ? createExportWorker(store.exportFrom, { store: name }) : undefined
