import { connect, ErrorCode, Events, headers as natsHeaders, type NatsConnection, type NatsError, type Subscription } from 'nats'
import { AppError } from '@lr/proto'
import { type Bus, DEFAULT_MAX_PAYLOAD, DEFAULT_TIMEOUT_MS, type Reply } from '@lr/proto'
import { DEADLINE_HEADER, deadlineFor, deadlineOf, EXPIRED_REPLY, expiredBy, expiredRequestLog } from './bus-deadline'
import { dataBytesOf, encodeReply, observeRound, replyWithin, REQUEST_ID_HEADER, requestTooLarge, runHandler, unwrapReply } from './bus-handler'
import { errorFields, log } from './log'
import { natsConnectOptions } from './nats-connect'
import { createNatsRequests } from './nats-requests'
import { createSettlers } from './nats-settlers'
import { within } from './within'
import { currentRequestId } from './request-context'
import { countedInShutdown } from './shutdown-failures'

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const encode = (value: unknown) => encoder.encode(JSON.stringify(value))
const decode = (data: Uint8Array): unknown => (data.length === 0 ? undefined : JSON.parse(decoder.decode(data)))

/** The Bus over NATS, with its connection and the first step of a graceful shutdown. */
export type NatsBus = Bus & {
  connection: NatsConnection
  /**
   * Stops taking messages and lets running handlers finish: every subscription made through
   * serve/subscribe is drained (no new message; what the server sent before is still handled),
   * then every handler still running completes and its reply is published. The connection stays
   * open (requests, publishes) until close(), which does this first.
   */
  stopServing(): Promise<void>
}

/** How long a shutdown step may wait on the server (it may be away); then it goes on without it. */
export const DRAIN_TIMEOUT_MS = 5_000

/** Bus.resumed's listeners; one that throws is logged, and neither stops the others nor the status loop. */
function createResumed() {
  const listeners = new Set<() => void>()
  return {
    listen(listener: () => void): () => void {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    tell(): void {
      for (const listener of listeners) {
        try {
          listener()
        } catch (error) {
          log().error(errorFields(error), 'a listener of the bus reconnecting failed')
        }
      }
    },
  }
}

export interface NatsBusOptions {
  /** BUS_MAX_PAYLOAD_BYTES; the server's max_payload lowers it when smaller. Default DEFAULT_MAX_PAYLOAD. */
  maxPayload?: number
  /** How long a settled publish waits for its settlers (nats-settlers.ts); default SETTLE_TIMEOUT_MS. */
  settleTimeoutMs?: number
  /** How long stopping waits for running handlers, in all (stopServing); default DEFAULT_TIMEOUT_MS. */
  handlerWaitMs?: number
}

/** Connects to NATS and returns a Bus over it; its own entry so importing proto never pulls `nats`. */
export async function createNatsBus(url: string, name: string, options: NatsBusOptions = {}): Promise<NatsBus> {
  const nc = await connect(natsConnectOptions(url, name))
  return wrapNatsConnection(nc, options)
}

/** What a request gets while the client has no connection: the caller may retry in a second. */
const notConnected = () => new AppError('unavailable', 'message bus is not connected', { retryAfter: 1 })

export function wrapNatsConnection(nc: NatsConnection, options: NatsBusOptions = {}): NatsBus {
  // One limit for both buses: the setting, or the server's max_payload when that is smaller
  // (the client would refuse to publish beyond it anyway, and a refused reply is a timeout).
  const maxPayload = Math.min(options.maxPayload ?? DEFAULT_MAX_PAYLOAD, nc.info?.max_payload ?? Number.POSITIVE_INFINITY)
  // While disconnected the client would hold a request in its reconnect buffer until the request
  // timed out (10 s); a caller is better served by a 503 at once. Requests already waiting when
  // the connection drops fail too: their replies would be lost with it.
  let connected = true
  const requests = createNatsRequests(nc)
  const settlers = createSettlers(nc, { settleTimeoutMs: options.settleTimeoutMs })
  const logExpired = expiredRequestLog()
  const resumed = createResumed()
  void (async () => {
    // One line each way (the server as host:port, never the URL's credentials): a broker away had
    // left most processes silent, their 503s the only trace, and nothing said when it ended.
    for await (const status of nc.status()) {
      if (status.type === Events.Reconnect) {
        connected = true
        log().info({ server: String(status.data) }, 'NATS connection back')
        settlers.reconnected()
        resumed.tell()
      }
      if (status.type !== Events.Disconnect) continue
      // Once per outage: nats.js tells a disconnect again after every attempt that fails (a
      // server that refuses the credentials: one every 250 ms).
      if (connected) log().warn({ server: String(status.data) }, 'NATS connection lost: bus requests fail at once (503) until it is back; reconnecting')
      connected = false
      requests.failAll(notConnected())
    }
  })()
  void nc.closed().then(() => requests.failAll(notConnected()))

  // nc.drain() alone would not wait for async handlers: their replies would find it closed.
  const subscriptions = new Set<Subscription>()
  const running = new Set<Promise<void>>()
  const track = (work: Promise<void>) => {
    running.add(work)
    void work.then(() => running.delete(work))
  }
  const keep = (sub: Subscription) => {
    subscriptions.add(sub)
    return () => {
      subscriptions.delete(sub)
      sub.unsubscribe()
    }
  }
  /** When stopping stops waiting for running handlers: set by the first stopServing. */
  let handlersDue: number | undefined
  async function stopServing(): Promise<void> {
    if (nc.isClosed()) return
    // Publishers stop waiting for this bus's answers; events it already took are still answered.
    settlers.leave()
    const draining = [...subscriptions].map((sub) => sub.drain().catch(() => undefined))
    subscriptions.clear()
    await within(DRAIN_TIMEOUT_MS, Promise.all(draining))
    const finished = async () => {
      while (running.size > 0) await Promise.all([...running])
    }
    // A handler may itself wait on a request (DEFAULT_TIMEOUT_MS at most). The wait is counted
    // from the first call on: close() after stopServing does not wait for the same handlers
    // again. It did, 10 s more: on MongoDB, whose connection closes only after the bus, that
    // took a stop to 20 s and more of its SHUTDOWN_DEADLINE_MS (25 s).
    handlersDue ??= performance.now() + (options.handlerWaitMs ?? DEFAULT_TIMEOUT_MS)
    const left = handlersDue - performance.now()
    if (running.size === 0 || left <= 0) return
    if ((await within(left, finished())) || handlersDue === 0) return
    handlersDue = 0 // waited in vain: no later call waits again (a timer may end a little early)
    log().error({ running: running.size }, 'bus handlers still running at close')
  }

  function translate(error: unknown, subject: string): AppError {
    const code = (error as NatsError)?.code
    if (code === ErrorCode.NoResponders) return new AppError('unavailable', `no service answers ${subject}`)
    if (code === ErrorCode.Timeout) return new AppError('timeout', `${subject} did not answer in time`)
    if (code === ErrorCode.MaxPayloadExceeded) return new AppError('payload_too_large', 'request is too large to forward')
    if (code === ErrorCode.ConnectionClosed || code === ErrorCode.Disconnect)
      return notConnected()
    return new AppError('unavailable', `message bus error: ${(error as Error)?.message ?? error}`)
  }

  /** One request's reply as it arrived; a failure to get one rejects as AppError. */
  async function replyOf(subject: string, payload: unknown, opts?: { timeoutMs?: number }): Promise<Uint8Array> {
    if (!connected) throw notConnected()
    try {
      const now = Date.now()
      // Within a handler, no later than its own caller waits: past that no one needs the answer.
      const deadline = deadlineFor(subject, opts?.timeoutMs ?? DEFAULT_TIMEOUT_MS, now)
      const headers = natsHeaders()
      headers.set(DEADLINE_HEADER, String(deadline))
      const requestId = currentRequestId()
      if (requestId) headers.set(REQUEST_ID_HEADER, requestId)
      const data = encode(payload)
      if (data.length > maxPayload) throw requestTooLarge(data.length, maxPayload)
      return await requests.request(subject, data, deadline - now, headers)
    } catch (error) {
      throw error instanceof AppError ? error : translate(error, subject)
    }
  }

  return {
    connection: nc,
    maxPayload,

    request<T>(subject: string, payload: unknown, opts?: { timeoutMs?: number }): Promise<T> {
      return observeRound(subject, async () => {
        const bytes = await replyOf(subject, payload, opts)
        let reply: Reply<T>
        try {
          reply = decode(bytes) as Reply<T>
        } catch (error) {
          throw translate(error, subject)
        }
        return unwrapReply(reply)
      })
    },

    requestJson(subject, payload, opts) {
      return observeRound(subject, async () => dataBytesOf(await replyOf(subject, payload, opts)))
    },

    serve(subject, handler, opts) {
      const sub = nc.subscribe(subject, {
        queue: opts?.queue,
        callback: (err, msg) => {
          if (err) return log().error({ subject, ...errorFields(err) }, 'bus subscription failed')
          // Its caller has given up: it waited for this process, busy, in the server's buffer
          // and the socket (bus-deadline.ts). Running it would only delay those behind it more.
          const deadline = deadlineOf(msg.headers?.get(DEADLINE_HEADER))
          const expired = expiredBy(deadline)
          if (expired > 0) {
            logExpired(subject, expired)
            return void msg.respond(EXPIRED_REPLY)
          }
          let payload: unknown
          try {
            payload = decode(msg.data)
          } catch {
            return msg.respond(encode({ ok: false, error: { code: 'bad_request', message: 'malformed message' } }))
          }
          track(
            runHandler(handler, payload, subject, msg.headers?.get(REQUEST_ID_HEADER) || undefined, deadline).then((reply) => {
              if (!msg.respond(encoder.encode(replyWithin(encodeReply(reply), maxPayload, subject)))) log().error({ subject }, 'bus request had no reply subject')
            }).catch((error) => {
              if (!countedInShutdown('bus reply not sent', error)) log().error({ subject, ...errorFields(error) }, 'bus reply not sent')
            }),
          )
        },
      })
      return keep(sub)
    },

    // `settled` waits for the subscribers that settle the subject (nats-settlers.ts), not for every one.
    async publish(subject, event, opts) {
      if (opts?.settled) return settlers.publishSettled(subject, encode(event), connected)
      nc.publish(subject, encode(event))
    },

    subscribe(pattern, handler, opts) {
      const settles = opts?.settles === true
      const sub = nc.subscribe(pattern, {
        queue: opts?.queue,
        callback: (err, msg) => {
          if (err) return log().error({ pattern, ...errorFields(err) }, 'bus subscription failed')
          track(
            Promise.resolve()
              .then(() => handler(decode(msg.data), msg.subject))
              .then(
                () => {
                  if (settles) settlers.answer(msg, true)
                },
                (error) => {
                  if (!countedInShutdown('bus subscriber failed', error)) log().error({ pattern, ...errorFields(error) }, 'bus subscriber failed')
                  if (settles) settlers.answer(msg, false)
                },
              ),
          )
        },
      })
      const unsubscribe = keep(sub)
      if (!settles) return unsubscribe
      const release = settlers.add(pattern)
      return () => {
        release()
        unsubscribe()
      }
    },

    resumed: resumed.listen,

    async ping() {
      if (nc.isClosed()) return false
      const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000))
      return Promise.race([nc.rtt().then(() => true, () => false), timeout])
    },

    stopServing,

    async close() {
      if (nc.isClosed()) return
      await stopServing()
      if (!(await within(DRAIN_TIMEOUT_MS, nc.drain()))) await nc.close()
    },
  }
}
