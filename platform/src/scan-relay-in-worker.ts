import type { Config } from '@lr/proto'
import { type ConsumerLag, recordLag } from './scan-stream-source'
import { watchRefusals } from './jetstream-refusals'
import { forgetThreadHeap, reportThreadHeap } from './metrics'
import { RELAY_REFUSED } from './scan-relay'
import { SCAN_STREAM } from './scan-stream-config'

/** The relay Worker's name in lr_thread_heap_used_bytes. */
const RELAY_THREAD = 'scan-relay'

export type RelayRequest = { type: 'start'; config: Config } | { type: 'stop' } | { type: 'giveWay'; behind: boolean }
export type RelayReply =
  | { type: 'started' | 'stopped' | 'stored' }
  | { type: 'failed' | 'closed'; message: string }
  /** Every 5 s: the consumer's lag, and the Worker's heap in use (process_heap_used_bytes). */
  | { type: 'lag'; lag: ConsumerLag; heapUsed: number }
  /** A round SCANS refused for want of room: JetStream's description (`insufficient resources`...). */
  | { type: 'refused'; description: string }

/**
 * The scan relay (scan-relay.ts) of an analytics process, on a thread of its own: in the
 * analytics thread it halved ingestion, the two sharing one event loop (scenario 6: 68k scans/s
 * applied with the relay there, 132k/s without it; bench/ANALYSIS.md, "Sixth session"). The
 * worker keeps a NATS connection of its own and hands its consumer's lag to this thread's
 * gauges, so /metrics shows `scans-relay` as before. Resolves once the relay runs (its stream
 * and consumer made); rejects with the worker's reason when it cannot start.
 */
export async function startScanRelayInWorker(
  config: Config,
  /**
   * Told once the relay can no longer work: its NATS connection closed for good, or the Worker
   * failed. The analytics process passes its NatsProcess.fail (one line, the usual stop, exit 1).
   */
  fail: (fields: Record<string, unknown>, message: string) => void,
): Promise<{ stop(): Promise<void>; giveWay(behind: boolean): void }> {
  const worker = new Worker(new URL('./scan-relay-worker.ts', import.meta.url).href)
  let answer: ((reply: RelayReply) => void) | undefined
  let stopping = false
  // The Worker's refusals by SCANS, counted, logged and on /readyz here (jetstream-refusals.ts).
  const refusals = watchRefusals(SCAN_STREAM, RELAY_REFUSED)
  worker.onmessage = ({ data }: MessageEvent<RelayReply>) => {
    if (data.type === 'lag') {
      recordLag(data.lag)
      return reportThreadHeap(RELAY_THREAD, data.heapUsed)
    }
    if (data.type === 'refused') return void refusals.failed({ description: data.description })
    if (data.type === 'stored') return refusals.stored()
    // A relay without its connection would leave SCANS unfed while analytics goes on (as below).
    if (data.type === 'closed') return stopping || fail({ connection: 'analytics-relay', error: data.message }, `the analytics-relay NATS connection closed for good (${data.message}): stopping`)
    answer?.(data)
  }
  // A relay that died would leave SCANS unfed while analytics goes on: the process ends with one
  // line, and its supervisor (Kubernetes) starts it again; the relay resumes from its consumer.
  let failed = false
  worker.onerror = (event) => {
    failed = true
    if (!stopping) fail({ error: event.message }, 'the scan relay worker failed: stopping')
  }
  const ask = (request: RelayRequest) =>
    new Promise<RelayReply>((resolve) => {
      answer = resolve
      worker.postMessage(request)
    })
  const started = await ask({ type: 'start', config })
  if (started.type === 'failed') {
    worker.terminate()
    throw new Error(`the scan relay did not start: ${started.message}`)
  }
  return {
    giveWay: (behind) => worker.postMessage({ type: 'giveWay', behind } satisfies RelayRequest),
    async stop() {
      stopping = true
      // A failed Worker answers nothing: the stop that its failure began must not wait for it.
      if (!failed) await ask({ type: 'stop' })
      worker.terminate()
      refusals.close()
      forgetThreadHeap(RELAY_THREAD)
    },
  }
}
