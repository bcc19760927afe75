import type { WireError } from './errors'

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
  /**
   * The largest message, in bytes, this bus carries: a request or a reply over it fails at once
   * (413 for a request, an error reply for a reply), on either adapter. Replies that could grow
   * (list pages, export chunks) are cut to fit it.
   */
  readonly maxPayload: number
  /**
   * `timeoutMs` (default DEFAULT_TIMEOUT_MS) is also the request's deadline: over NATS it travels
   * in a header, and a service that gets to the request only after it has passed (it was busy)
   * does not run the handler; the caller has given up by then (a 504), and a caller that still
   * waits is answered AppError('timeout'). The in-process bus starts every handler at once.
   * Made while handling a request, it waits no longer than that request's caller does (it
   * inherits its deadline), and once that has passed it is not sent: AppError('timeout') at once.
   */
  request<T>(subject: string, payload: unknown, opts?: { timeoutMs?: number }): Promise<T>
  /**
   * `request`, answering the handler's data as the UTF-8 JSON that travelled, unparsed: for a
   * caller that sends it on as a body without reading it (the gateway's list pages), so 100
   * records are not parsed and serialised again. Errors reject as with `request`.
   */
  requestJson(subject: string, payload: unknown, opts?: { timeoutMs?: number }): Promise<Uint8Array>
  /**
   * `queue` load-balances replicas: one queue group per service. Returns an unsubscribe. A request
   * past its deadline (see `request`) is not handed to `handler`.
   */
  serve(subject: string, handler: Handler, opts?: { queue?: string }): () => void
  /**
   * Publishes an event; subjects may be matched by subscribers with `*` and `>`. With `settled`,
   * it resolves only once the event took effect where a publisher must wait for it (a dynamic
   * code's change in every resolver, so the very next scan obeys it): the in-process bus waits
   * for every subscriber's handler to settle (the promise it returned too); over NATS, where a
   * publisher cannot see the subscribers, for each live one that subscribed with `settles`,
   * at most a bounded time each (platform/src/nats-settlers.ts).
   */
  publish(subject: string, event: unknown, opts?: { settled?: boolean }): Promise<void>
  /**
   * `queue` shares the events among a group's members (one each). `settles`: a `settled`
   * publish over NATS waits for this subscriber's handler (a plain one is waited for only in
   * one process, where every subscriber is).
   */
  subscribe(pattern: string, handler: EventHandler, opts?: { queue?: string; settles?: boolean }): () => void
  /**
   * Whether an event published on `subject` now would reach a subscriber. Only a bus that knows
   * every subscriber has it (the in-process one); without it, assume one does.
   */
  subscribed?(subject: string): boolean
  /**
   * Calls `listener` each time the transport has reconnected after losing its connection (not at
   * the first connect); returns a stop. Events published meanwhile may have been missed, and are
   * not sent again: a subscriber that keeps state built from them (a resolver's cached codes)
   * should read it afresh. Only a bus that can disconnect has it (NATS); the in-process one never does.
   */
  resumed?(listener: () => void): () => void
  /** Resolves while the transport answers; used by /readyz. */
  ping(): Promise<boolean>
  close(): Promise<void>
}

export const DEFAULT_TIMEOUT_MS = 10_000

/**
 * BUS_MAX_PAYLOAD_BYTES' default: the max_payload our nats-server runs with (deploy/infra,
 * test harness). An API body of 1 MiB travels inside a JSON envelope, so it must be well above.
 */
export const DEFAULT_MAX_PAYLOAD = 8 * 1024 * 1024

/** Room a reply keeps for its envelope when a list page or export chunk is sized to fit. */
export const REPLY_ENVELOPE_BYTES = 64 * 1024
