import { AppError, toAppError, type WireError } from './errors'

/** A handler's answer as it travels: data, or an error the caller rebuilds as AppError. */
export type Reply<T> = { ok: true; data: T } | { ok: false; error: WireError }

export type Handler = (payload: unknown) => Promise<unknown>
export type EventHandler = (event: unknown, subject: string) => void | Promise<void>

/**
 * Request-reply transport between gateway and services, plus fire-and-forget events.
 * Adapters: createLocalBus (one process), createNatsBus (NATS, in bus-nats.ts).
 * `request` resolves with the handler's data or rejects with the handler's AppError;
 * no responder -> AppError('unavailable'), no answer in time -> AppError('timeout').
 */
export interface Bus {
  request<T>(subject: string, payload: unknown, opts?: { timeoutMs?: number }): Promise<T>
  /** `queue` load-balances replicas: one queue group per service. Returns an unsubscribe. */
  serve(subject: string, handler: Handler, opts?: { queue?: string }): () => void
  /** Publishes an event; subjects may be matched by subscribers with `*` and `>`. */
  publish(subject: string, event: unknown): Promise<void>
  subscribe(pattern: string, handler: EventHandler, opts?: { queue?: string }): () => void
  /** Resolves while the transport answers; used by /readyz. */
  ping(): Promise<boolean>
  close(): Promise<void>
}

export const DEFAULT_TIMEOUT_MS = 10_000

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
