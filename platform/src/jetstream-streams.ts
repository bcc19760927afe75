import { DiscardPolicy, type JetStreamManager, nanos, RetentionPolicy, StorageType, type StreamConfig } from 'nats'

/** A message re-published (retry after a lost PubAck) within this window is stored once. */
export const DUPLICATE_WINDOW_MS = 2 * 60_000
/** Messages stay this long for a consumer that is away, then the oldest go. */
export const MAX_AGE_MS = 7 * 24 * 3600_000

export type StreamSettings = Partial<StreamConfig> & { name: string; subjects: string[] }

/**
 * How every stream of ours is made (SCAN_BATCHES, SCANS, RECORD_EVENTS): file storage, limits
 * retention dropping the oldest, the duplicate window and the age above.
 */
export const durableStream = (name: string, subjects: string[]): StreamSettings => ({
  name,
  subjects,
  storage: StorageType.File,
  retention: RetentionPolicy.Limits,
  discard: DiscardPolicy.Old,
  duplicate_window: nanos(DUPLICATE_WINDOW_MS),
  max_age: nanos(MAX_AGE_MS),
})

/**
 * Creates the stream, or leaves it as it is when it exists with these settings; one made with
 * other subjects, window or age is updated to them (its replica count and the rest are kept).
 * Safe to call from every process at start. Resolves true when it had to create the stream.
 */
export async function ensureStream(jsm: JetStreamManager, wanted: StreamSettings): Promise<boolean> {
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
