import type { ChunkShape } from '@lr/platform/csv-format'
import { errorFields, log } from '@lr/platform/log'
import { secondsSince, storeDuration } from '@lr/platform/metrics'
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
export type ExportChunkReply = { id: number; csv: string; next: string | null; ahead: boolean } | { id: number; error: string }
export type ExportControl = { type: 'open'; path: string; kind: SqliteKind }
export type ExportControlReply = { type: 'opened'; error?: string }

/** One chunk: its CSV, the store position after it (null: the export is done), and whether the Worker had read it ahead. */
export type ExportChunkText = { csv: string; next: string | null; ahead: boolean }

export interface ExportWorker {
  /** One chunk of a library's export, read and formatted by the Worker; rejects when the Worker cannot (the caller then makes it itself). */
  chunk(request: Omit<ExportChunkRequest, 'type' | 'id'>): Promise<ExportChunkText>
  /** Whether a Worker is running (it ends after EXPORT_WORKER_IDLE_MS without a chunk). */
  active(): boolean
  /** Ends the Worker; a later chunk would start another. */
  close(): Promise<void>
}

/** How long an idle Worker stays: an export asks for its next chunk within milliseconds, the next export may come much later. */
export const EXPORT_WORKER_IDLE_MS = 30_000

/**
 * A SQLite store's CSV export read and formatted by a Worker (export-worker.ts), so an export of a
 * million rows neither holds the thread that answers API requests and redirects for seconds nor
 * waits for it: the main thread only streams the chunks out, and the Worker reads the next chunk
 * while it does (bench/ANALYSIS.md, "Eleventh session": a 1M-row dynamic export's main thread
 * from 3.1-3.6 s to 0.3-0.4 s of CPU). Started by the first export, ended after
 * EXPORT_WORKER_IDLE_MS without one, so a process that never exports never pays for its VM.
 * A chunk the Worker could not make (it failed, or died) rejects, and the service makes it on
 * its own thread; the next export starts a new Worker if this one died.
 */
export function createExportWorker(source: SqliteExportSource, opts: { store: string; idleMs?: number }): ExportWorker {
  const idleMs = opts.idleMs ?? EXPORT_WORKER_IDLE_MS
  const waiting = new Map<number, { resolve(chunk: ExportChunkText): void; reject(error: Error): void }>()
  let next = 0
  let running: Promise<Worker> | undefined
  let idle: Timer | undefined

  function failAll(error: Error): void {
    for (const pending of waiting.values()) pending.reject(error)
    waiting.clear()
  }

  function start(): Promise<Worker> {
    const worker = new Worker(new URL('./export-worker.ts', import.meta.url).href)
    // Never what keeps a process alive: stop() ends it, the idle timer too.
    worker.unref()
    return new Promise<Worker>((resolve, reject) => {
      worker.onmessage = ({ data }: MessageEvent<ExportChunkReply | ExportControlReply>) => {
        if ('type' in data) {
          if (data.error) {
            worker.terminate()
            return reject(new Error(`export worker: ${data.error}`))
          }
          return resolve(worker)
        }
        const pending = waiting.get(data.id)
        waiting.delete(data.id)
        if ('error' in data) pending?.reject(new Error(`export worker: ${data.error}`))
        else pending?.resolve({ csv: data.csv, next: data.next, ahead: data.ahead })
        if (waiting.size === 0) idleFrom(worker)
      }
      worker.onerror = (event) => {
        const error = new Error(`export worker failed: ${event.message}`)
        log().error(errorFields(error), 'export worker failed')
        running = undefined
        worker.terminate()
        reject(error)
        failAll(error)
      }
      worker.postMessage({ type: 'open', path: source.path, kind: source.kind } satisfies ExportControl)
    })
  }

  function idleFrom(worker: Worker): void {
    clearTimeout(idle)
    idle = setTimeout(() => {
      if (waiting.size > 0) return
      running = undefined
      worker.terminate()
    }, idleMs)
    idle.unref()
  }

  return {
    async chunk(request) {
      clearTimeout(idle)
      running ??= start().catch((error) => {
        running = undefined
        throw error
      })
      const worker = await running
      const started = performance.now()
      return new Promise<ExportChunkText>((resolve, reject) => {
        const id = next++
        // The Worker's store metrics would stay in its thread, which no /metrics reads: timed here.
        const observe = (outcome: 'ok' | 'error') => storeDuration.observe({ store: opts.store, operation: 'exportPage', outcome }, secondsSince(started))
        waiting.set(id, {
          resolve: (chunk) => (observe('ok'), resolve(chunk)),
          reject: (error) => (observe('error'), reject(error)),
        })
        worker.postMessage({ ...request, type: 'chunk', id } satisfies ExportChunkRequest)
      })
    },
    active: () => running !== undefined,
    async close() {
      clearTimeout(idle)
      const worker = await running?.catch(() => undefined)
      running = undefined
      failAll(new Error('export worker closed'))
      worker?.terminate()
    },
  }
}

/** The export Worker of a store that can have one (LibraryStore.exportFrom: SQLite on a file); `store` names it in the metrics. */
export const exportWorkerOf = <R extends RecordBase>(store: LibraryStore<R, unknown>, name: string): ExportWorker | undefined =>
  store.exportFrom ? createExportWorker(store.exportFrom, { store: name }) : undefined
