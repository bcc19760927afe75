import { DiscardPolicy, type JetStreamManager, type KV, type KvOptions, nanos, type NatsConnection, RetentionPolicy, StorageType, type StreamConfig } from 'nats'

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
 * other subjects, window or age is updated to them (its replica count and the rest are kept);
 * one of another retention is refused with an error saying what to do.
 * Safe to call from every process at start. Resolves true when it had to create the stream.
 */
export async function ensureStream(jsm: JetStreamManager, wanted: StreamSettings): Promise<boolean> {
  const info = await infoOf(jsm, wanted.name)
  if (!info) {
    // Another process may create it between the two calls: adding the same settings again
    // succeeds, except in the moment the server is still registering the other's stream.
    try {
      await jsm.streams.add(wanted)
      return true
    } catch (error) {
      if (!isSubjectOverlap(error) || !(await infoOf(jsm, wanted.name))) throw error
      return ensureStream(jsm, wanted)
    }
  }
  const { subjects, duplicate_window, max_age, retention } = info.config
  // A work queue refuses a second consumer, interest retention drops what no consumer holds yet:
  // nats-server will not change it, and the stream's messages are the operator's to give up.
  if (wanted.retention !== undefined && retention !== wanted.retention)
    throw new Error(
      `the JetStream stream ${wanted.name} has retention ${retention}, not ${wanted.retention}: several consumers read each of its messages; remove it (nats stream rm ${wanted.name}) or recreate it with --retention ${wanted.retention}`,
    )
  if (subjects.join() !== wanted.subjects.join() || duplicate_window !== wanted.duplicate_window || max_age !== wanted.max_age)
    await jsm.streams.update(wanted.name, { ...info.config, subjects: wanted.subjects, duplicate_window: wanted.duplicate_window, max_age: wanted.max_age })
  return false
}

/**
 * A key-value bucket, created if missing (nats.js's `views.kv`), opened again when another process
 * created it in the same moment (see isSubjectOverlap). A second refusal is a real one.
 */
export async function openBucket(nc: NatsConnection, bucket: string, opts: Partial<KvOptions>): Promise<KV> {
  try {
    return await nc.jetstream().views.kv(bucket, opts)
  } catch (error) {
    if (!isSubjectOverlap(error)) throw error
    return nc.jetstream().views.kv(bucket, opts)
  }
}

const infoOf = (jsm: JetStreamManager, name: string) =>
  jsm.streams.info(name).catch((error) => {
    if ((error as { code?: string }).code === '404') return undefined
    throw error
  })

/** JSStreamSubjectOverlapErr: the server's answer when the subjects are already a stream's. */
const SUBJECT_OVERLAP = 10065

/**
 * Two processes creating the same stream (or key-value bucket) at the same moment can get this
 * refusal instead of the usual idempotent success: nats-server checks the name, then the
 * subjects, while the other creation registers (about once in 800 concurrent bucket creations;
 * jetstream-streams.test.ts). Looking again then finds the stream; a stream of another name that
 * truly holds the subjects is refused again.
 */
export const isSubjectOverlap = (error: unknown) => (error as { api_error?: { err_code?: number } }).api_error?.err_code === SUBJECT_OVERLAP
