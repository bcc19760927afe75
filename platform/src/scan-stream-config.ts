import { DiscardPolicy, type JetStreamManager, type NatsConnection, nanos, RetentionPolicy, StorageType, type StreamConfig } from 'nats'

/**
 * The durable scan pipeline with TRANSPORT=nats (docs/decisions.md §5): every scan is a message of
 * the JetStream stream SCANS on scans.<code>, deduplicated by its scan_id (`Nats-Msg-Id`).
 */
export const SCAN_STREAM = 'SCANS'
export const SCAN_STREAM_SUBJECTS = ['scans.>']
/** A re-published scan (retry after a lost PubAck) within this window is stored once. */
export const SCAN_DUPLICATE_WINDOW_MS = 2 * 60_000
/** Scans stay in the stream this long for any consumer, then the oldest go. */
export const SCAN_MAX_AGE_MS = 7 * 24 * 3600_000

export const scanStreamConfig = (): Partial<StreamConfig> & { name: string } => ({
  name: SCAN_STREAM,
  subjects: SCAN_STREAM_SUBJECTS,
  storage: StorageType.File,
  retention: RetentionPolicy.Limits,
  discard: DiscardPolicy.Old,
  duplicate_window: nanos(SCAN_DUPLICATE_WINDOW_MS),
  max_age: nanos(SCAN_MAX_AGE_MS),
})

/**
 * Creates the SCANS stream, or leaves it as it is when it exists with these settings; one made
 * with other subjects, window or age is updated to them. Safe to call from every process at start.
 */
export async function ensureScanStream(jsm: JetStreamManager): Promise<void> {
  const wanted = scanStreamConfig()
  try {
    await jsm.streams.add(wanted)
  } catch (error) {
    const info = await jsm.streams.info(SCAN_STREAM).catch(() => {
      throw error
    })
    const { subjects, duplicate_window, max_age } = info.config
    if (subjects.join() !== SCAN_STREAM_SUBJECTS.join() || duplicate_window !== wanted.duplicate_window || max_age !== wanted.max_age)
      await jsm.streams.update(SCAN_STREAM, { ...info.config, subjects: wanted.subjects, duplicate_window: wanted.duplicate_window, max_age: wanted.max_age })
  }
}
