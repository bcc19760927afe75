import type { ApplyScans, Config } from '@lr/proto'
import { secondsSince, storeDuration } from '@lr/platform/metrics'

/** `events` is the batch as JSON text: a string crosses to a worker far cheaper than 1000 objects. */
export interface IngestRequest { type: 'ingest'; id: number; events: string }
export type IngestReply = { id: number; applied: number } | { id: number; error: string }

/**
 * One-process mode: scan batches are applied by a Worker, so the SQLite writes of ingestion run
 * on the second core instead of the thread that answers redirects and API calls (the benchmark's
 * profile: three quarters of the resolver's busy time was ingestion). Each batch resolves once
 * the worker committed it, exactly like an in-thread apply, so the scan source's retry and
 * stop semantics are unchanged.
 */
export async function ingestInWorker(config: Config): Promise<{ apply: ApplyScans; close(): Promise<void> }> {
  const worker = new Worker(new URL('./ingest-worker.ts', import.meta.url).href)
  const waiting = new Map<number, { resolve(): void; reject(error: Error): void }>()
  let next = 0
  let control: (() => void) | undefined
  worker.onmessage = ({ data }: MessageEvent<IngestReply | { type: 'opened' | 'closed' }>) => {
    if ('type' in data) return control?.()
    const pending = waiting.get(data.id)
    waiting.delete(data.id)
    if ('error' in data) pending?.reject(new Error(`scan ingestion failed: ${data.error}`))
    else pending?.resolve()
  }
  // A dead worker must not leave batches waiting forever: the scan source retries what failed.
  worker.onerror = (event) => {
    for (const pending of waiting.values()) pending.reject(new Error(`scan ingestion worker failed: ${event.message}`))
    waiting.clear()
  }
  const roundTrip = (message: object) =>
    new Promise<void>((resolve) => {
      control = resolve
      worker.postMessage(message)
    })
  await roundTrip({ type: 'open', config })
  return {
    apply: (events) => {
      const started = performance.now()
      // The Worker's own store metrics stay in its thread, which no /metrics reads: the batch's
      // write is timed here instead, as this thread waits for it.
      const observe = (outcome: 'ok' | 'error') => storeDuration.observe({ store: 'analytics', operation: 'applyScans', outcome }, secondsSince(started))
      return new Promise<void>((resolve, reject) => {
        const id = next++
        waiting.set(id, {
          resolve: () => (observe('ok'), resolve()),
          reject: (error) => (observe('error'), reject(error)),
        })
        worker.postMessage({ type: 'ingest', id, events: JSON.stringify(events) } satisfies IngestRequest)
      })
    },
    async close() {
      await roundTrip({ type: 'close' })
      worker.terminate()
    },
  }
}
