import { AppError, type Handler, type Reply, toAppError } from '@lr/proto'
import { errorFields, log } from './log'
import { busHandlerDuration, busRequestDuration, secondsSince } from './metrics'
import { withRequestId } from './request-context'

/** The header (NATS) or field (local bus) that carries the request id to the service. */
export const REQUEST_ID_HEADER = 'x-request-id'

/**
 * Runs a handler and turns every outcome into a Reply, so no rejection escapes onto the
 * transport. It runs as part of request `requestId`, so the service's log lines carry it.
 */
export function runHandler(handler: Handler, payload: unknown, subject: string, requestId?: string): Promise<Reply<unknown>> {
  return withRequestId(requestId, async () => {
    const started = performance.now()
    let reply: Reply<unknown>
    try {
      reply = { ok: true, data: await handler(payload) }
    } catch (error) {
      if (!(error instanceof AppError)) log().error({ subject, ...errorFields(error) }, 'bus handler failed')
      reply = { ok: false, error: toAppError(error).toWire() }
    }
    const outcome = reply.ok ? 'ok' : 'error'
    const seconds = secondsSince(started)
    busHandlerDuration.observe({ subject, outcome }, seconds)
    log().debug({ subject, outcome, duration_ms: Math.round(seconds * 1e4) / 10 }, 'bus request handled')
    return reply
  })
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

/** Records one request-reply round trip as the caller saw it. */
export function observeRequest(subject: string, started: number, error?: unknown): void {
  const outcome = error === undefined ? 'ok' : error instanceof AppError && (error.code === 'timeout' || error.code === 'unavailable') ? error.code : 'error'
  busRequestDuration.observe({ subject, outcome }, secondsSince(started))
}

export function unwrapReply<T>(reply: Reply<T>): T {
  if (reply.ok) return reply.data
  throw AppError.fromWire(reply.error)
}

/** NATS-style subject matching: `*` is one token, `>` is the rest. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.')
  const s = subject.split('.')
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false
  }
  return p.length === s.length
}
