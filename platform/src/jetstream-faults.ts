import type { JetStreamManager, NatsConnection } from 'nats'
import { errorFields, log } from './log'
import { atMostEvery } from './log-throttle'

/**
 * How nats.js reports a JetStream stream or consumer that is not there: a broker restarted
 * without its store, or one deleted by hand. Our publishers and consumers make theirs again
 * instead of waiting for a restart of the process (tests: platform/test/scan-stream.test.ts,
 * platform/test/record-stream.test.ts).
 */
const codeOf = (error: unknown) => (error as { code?: string } | null)?.code

/**
 * A publish no stream took: "503" (no responders on the subject). Not a stream's refusal, which
 * nats.js reports as "503" too but with JetStream's own error (`api_error`: a full store,
 * jetstream-refusals.ts): taken for a missing stream, the ingest lease's bucket was "made again"
 * every second while the store was full, with a line saying it had been missing.
 */
export const isMissingStream = (error: unknown): boolean => codeOf(error) === '503' && (error as { api_error?: unknown }).api_error === undefined

/**
 * A pull from a consumer, or a consumer of a stream, that does not exist: "404" (consumer /
 * stream not found), or "409 consumer deleted" when it went during the pull (the next pull would
 * only say 404 seconds later).
 */
export const isMissingConsumer = (error: unknown): boolean =>
  codeOf(error) === '404' || (codeOf(error) === '409' && (error as Error).message === 'consumer deleted')

/** A line a JetStream fault repeats at each try (every second): at most one per this. */
export const CANNOT_MAKE_LOG_EVERY_MS = 10_000

/**
 * The line of a stream or bucket that could not be made again (`what`, e.g. "the stream
 * SCAN_BATCHES"), the first at once and then at most one per CANNOT_MAKE_LOG_EVERY_MS with
 * `repeated`: a server run without JetStream had every process write one each second. nats.js's
 * JetStream manager says only "503" when nothing answers on $JS.API: the server runs without
 * JetStream (or lost it), not a missing stream, and the line says how to enable it.
 */
export function cannotMakeYet(what: string, fields: Record<string, unknown>): (error: unknown) => void {
  const throttle = atMostEvery(CANNOT_MAKE_LOG_EVERY_MS)
  return (error) =>
    throttle((repeated) =>
      codeOf(error) === '503'
        ? log().warn({ ...fields, repeated, ...errorFields(error) }, `JetStream does not answer on the NATS server (503: not enabled, or not available): ${what} cannot be made yet; start nats-server with -js (or a jetstream block in its configuration)`)
        : log().warn({ ...fields, repeated, ...errorFields(error) }, `${what} is missing and could not be made yet`),
    )
}

/**
 * What a publisher calls after a failed publish: a broker that lost its JetStream store (restarted
 * without its volume) or a stream deleted by hand answers every publish "no responders" (or
 * nothing, when a plain subscriber listens on the subject), so the stream is made again if it is
 * missing, at most once a second; what was held meanwhile follows without a restart.
 */
export function streamRestorer(nc: NatsConnection, stream: string, ensure: (jsm: JetStreamManager) => Promise<boolean>): () => void {
  let triedAt = 0
  const failed = cannotMakeYet(`the stream ${stream}`, { stream })
  return () => {
    if (Date.now() - triedAt < 1000) return
    triedAt = Date.now()
    nc.jetstreamManager()
      .then(ensure)
      .then((made) => made && log().warn({ stream }, `the stream ${stream} was missing: made it again`))
      .catch(failed)
  }
}
