/**
 * How nats.js reports a JetStream stream or consumer that is not there: a broker restarted
 * without its store, or one deleted by hand. Our publishers and consumers make theirs again
 * instead of waiting for a restart of the process (tests: platform/test/scan-stream.test.ts,
 * platform/test/record-stream.test.ts).
 */
const codeOf = (error: unknown) => (error as { code?: string } | null)?.code

/** A publish no stream took: "503" (no responders on the subject). */
export const isMissingStream = (error: unknown): boolean => codeOf(error) === '503'

/** A pull from a consumer, or a consumer of a stream, that does not exist: "404" (consumer / stream not found). */
export const isMissingConsumer = (error: unknown): boolean => codeOf(error) === '404'
