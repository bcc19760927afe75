import { AppError, type Handler, type Reply, toAppError } from '@lr/proto'
import { errorFields, log } from './log'
import { busHandlerDuration, busRequestDuration, secondsSince } from './metrics'
import { failedOutcome } from './outcome'
import { asHandlerOf } from './request-context'
import { countedInShutdown } from './shutdown-failures'

/** The header (NATS) or field (local bus) that carries the request id to the service. */
export const REQUEST_ID_HEADER = 'x-request-id'

/**
 * Runs a handler and turns every outcome into a Reply, so no rejection escapes onto the
 * transport. It runs as part of request `requestId`, so the service's log lines carry it, and
 * with its caller's `deadline`, which the handler's own requests inherit (bus-deadline.ts).
 */
export function runHandler(handler: Handler, payload: unknown, subject: string, requestId?: string, deadline?: number): Promise<Reply<unknown>> {
  return asHandlerOf(requestId, deadline, async () => {
    const started = performance.now()
    let reply: Reply<unknown>
    let outcome = 'ok'
    try {
      reply = { ok: true, data: await handler(payload) }
    } catch (error) {
      const answer = replyError(error, subject)
      outcome = failedOutcome(answer)
      reply = { ok: false, error: answer.toWire() }
    }
    const seconds = secondsSince(started)
    busHandlerDuration.observe({ subject, outcome }, seconds)
    log().debug({ subject, outcome, duration_ms: Math.round(seconds * 1e4) / 10 }, 'bus request handled')
    return reply
  })
}

/**
 * What a failed handler answers. An error other than AppError is logged, and answered `internal`;
 * one of a store or connection the process's stop closed under it is only counted
 * (shutdown-failures.ts) and answered `unavailable`: the caller may retry on another replica.
 */
function replyError(error: unknown, subject: string): AppError {
  if (error instanceof AppError) return error
  if (countedInShutdown('bus handler failed', error)) return new AppError('unavailable', 'the service is stopping', { retryAfter: 1 })
  log().error({ subject, ...errorFields(error) }, 'bus handler failed')
  return toAppError(error)
}

/**
 * A handler's answer that is JSON text already (a list page kept by its service): the bus sends
 * the text as the reply's data, where any other answer is serialised. A caller of `request` gets
 * its parsed value, a caller of `requestJson` these bytes, as with any other answer.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A reply as its JSON text, as every bus sends it: `{"ok":true,"data":...}` in this order (dataBytesOf). */
export function encodeReply(reply: Reply<unknown>): string {
  return reply.ok && reply.data instanceof JsonText ? `{"ok":true,"data":${reply.data.text}}` : JSON.stringify(reply)
}

/** The 413 for a request the bus cannot carry, before anything is sent. */
export const requestTooLarge = (bytes: number, max: number) =>
  new AppError('payload_too_large', `request is too large to forward (${bytes} bytes; the bus carries at most ${max})`)

/**
 * A reply as it travels, or an error reply when it is over `max`: the caller hears at once
 * instead of waiting for its timeout, and the operator reads why.
 */
export function replyWithin(encoded: string, max: number, subject: string): string {
  // UTF-8 never takes more than 3 bytes per UTF-16 unit: count exactly only near the limit.
  if (encoded.length * 3 <= max) return encoded
  const bytes = Buffer.byteLength(encoded)
  if (bytes <= max) return encoded
  log().error({ subject, bytes, max_payload: max }, 'reply too large for the bus')
  return JSON.stringify({ ok: false, error: { code: 'internal', message: `the reply is too large for the message bus (${bytes} bytes; at most ${max})` } })
}

/**
 * Runs one request-reply round trip, recording its duration and outcome as the caller saw them:
 * ok, refused (a 4xx answer), error, or the bus's own timeout or unavailable (failedOutcome).
 */
export async function observeRound<R>(subject: string, run: () => Promise<R>): Promise<R> {
  const started = performance.now()
  const observe = (outcome: string) => busRequestDuration.observe({ subject, outcome }, secondsSince(started))
  try {
    const result = await run()
    observe('ok')
    return result
  } catch (error) {
    observe(error instanceof AppError && (error.code === 'timeout' || error.code === 'unavailable') ? error.code : failedOutcome(error))
    throw error
  }
}

/** How every successful reply's JSON begins: runHandler builds `{ ok: true, data }` in this order. */
const OK_PREFIX = new TextEncoder().encode('{"ok":true,"data":')
const CLOSING_BRACE = 0x7d

/**
 * The data of an encoded reply as its own JSON bytes, cut out of the envelope without parsing
 * it (a view of the same memory); any other reply (an error) is parsed and thrown as AppError.
 */
export function dataBytesOf(envelope: Uint8Array): Uint8Array {
  const ok = envelope.length > OK_PREFIX.length && envelope[envelope.length - 1] === CLOSING_BRACE && OK_PREFIX.every((byte, i) => envelope[i] === byte)
  if (ok) return envelope.subarray(OK_PREFIX.length, envelope.length - 1)
  const data = unwrapReply(JSON.parse(new TextDecoder().decode(envelope)) as Reply<unknown>)
  return new TextEncoder().encode(JSON.stringify(data ?? null))
}

export function unwrapReply<T>(reply: Reply<T>): T {
  if (reply.ok) return reply.data
  throw AppError.fromWire(reply.error)
}

/** NATS-style subject matching: `*` is one token, `>` is the rest. */
export function subjectMatches(pattern: string, subject: string): boolean {
  return tokensMatch(pattern.split('.'), subject.split('.'))
}

/**
 * subjectMatches on subjects already split at their dots: a caller that tries one subject
 * against many patterns splits each once (the in-process bus: a write's change event is on a
 * subject of its own code, so every one is new to its cache of matches).
 */
export function tokensMatch(p: readonly string[], s: readonly string[]): boolean {
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false
  }
  return p.length === s.length
}
