import { DiscardPolicy, type JetStreamManager, type JsMsg, nanos, RetentionPolicy, StorageType, type StreamConfig } from 'nats'

/**
 * The durable scan pipeline with TRANSPORT=nats (docs/decisions.md §5), two streams:
 * - SCAN_BATCHES, the ingestion path: the resolver publishes what it counted while its previous
 *   batches awaited their PubAck as one message (a JSON array of scan events, `Nats-Msg-Id` =
 *   the batch id, so a batch re-sent after a lost PubAck is stored once); analytics applies
 *   them, the webhooks worker reads them. One acknowledged publish per scan held the broker to
 *   ~22k scans/s on 2 cores (bench/ANALYSIS.md, "Fifth session").
 * - SCANS, the public one: every scan a message of its own on scans.<code>, deduplicated by
 *   scan_id (`Nats-Msg-Id`), for outside consumers (README "Scan events"). The relay in the
 *   analytics process (scan-relay.ts) fills it from SCAN_BATCHES, unless SCAN_RELAY=0.
 */
export const SCAN_BATCH_STREAM = 'SCAN_BATCHES'
export const SCAN_BATCH_SUBJECT = 'scan-batches'
export const SCAN_STREAM = 'SCANS'
export const SCAN_STREAM_SUBJECTS = ['scans.>']
/** A message re-published (retry after a lost PubAck) within this window is stored once. */
export const SCAN_DUPLICATE_WINDOW_MS = 2 * 60_000
/** Scans stay in the streams this long for any consumer, then the oldest go. */
export const SCAN_MAX_AGE_MS = 7 * 24 * 3600_000

const streamConfig = (name: string, subjects: string[]): Partial<StreamConfig> & { name: string; subjects: string[] } => ({
  name,
  subjects,
  storage: StorageType.File,
  retention: RetentionPolicy.Limits,
  discard: DiscardPolicy.Old,
  duplicate_window: nanos(SCAN_DUPLICATE_WINDOW_MS),
  max_age: nanos(SCAN_MAX_AGE_MS),
})

export const scanStreamConfig = () => streamConfig(SCAN_STREAM, SCAN_STREAM_SUBJECTS)
export const scanBatchStreamConfig = () => streamConfig(SCAN_BATCH_STREAM, [SCAN_BATCH_SUBJECT])

/**
 * Creates the stream, or leaves it as it is when it exists with these settings; one made with
 * other subjects, window or age is updated to them. Safe to call from every process at start.
 * Resolves true when it had to create the stream (it was missing).
 */
async function ensureStream(jsm: JetStreamManager, wanted: ReturnType<typeof streamConfig>): Promise<boolean> {
  const info = await jsm.streams.info(wanted.name).catch((error) => {
    if ((error as { code?: string }).code === '404') return undefined
    throw error
  })
  if (!info) {
    // Another process may create it between the two calls: adding the same settings again succeeds.
    await jsm.streams.add(wanted)
    return true
  }
  const { subjects, duplicate_window, max_age } = info.config
  if (subjects.join() !== wanted.subjects.join() || duplicate_window !== wanted.duplicate_window || max_age !== wanted.max_age)
    await jsm.streams.update(wanted.name, { ...info.config, subjects: wanted.subjects, duplicate_window: wanted.duplicate_window, max_age: wanted.max_age })
  return false
}

export const ensureScanStream = (jsm: JetStreamManager) => ensureStream(jsm, scanStreamConfig())
export const ensureScanBatchStream = (jsm: JetStreamManager) => ensureStream(jsm, scanBatchStreamConfig())

/**
 * The scan events of one SCAN_BATCHES message (a JSON array); a malformed message is [null], so
 * the consumer's validation drops it and it is acknowledged with the rest.
 */
export function scansOfBatch(msg: JsMsg): unknown[] {
  try {
    const events = msg.json()
    return Array.isArray(events) ? events : [null]
  } catch {
    return [null]
  }
}
