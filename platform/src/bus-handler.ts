import { AppError, type Handler, type Reply, toAppError } from '@lr/proto'

/** Runs a handler and turns every outcome into a Reply, so no rejection escapes onto the transport. */
export async function runHandler(handler: Handler, payload: unknown, subject: string): Promise<Reply<unknown>> {
  try {
    return { ok: true, data: await handler(payload) }
  } catch (error) {
    if (!(error instanceof AppError)) console.error(`[bus] handler for ${subject} failed:`, error)
    return { ok: false, error: toAppError(error).toWire() }
  }
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
