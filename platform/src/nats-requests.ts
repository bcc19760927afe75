import { createInbox, ErrorCode, type MsgHdrs, type NatsConnection } from 'nats'

/** Why a request got no reply, with the code nats.js gives the same failure (bus-nats.ts translates both). */
export class NoReply extends Error {
  constructor(readonly code: typeof ErrorCode.Timeout | typeof ErrorCode.NoResponders) {
    super(code === ErrorCode.Timeout ? 'timeout' : 'no responders')
  }
}

interface Waiting {
  resolve(data: Uint8Array): void
  reject(error: unknown): void
  timer: Timer
}

/**
 * Request-reply on one reply subscription: each request is a core publish whose reply subject is
 * this subscription's inbox and a token of its own. A reply settles its request by the token;
 * a reply that comes after its request timed out is dropped.
 *
 * "No responders" is the server's status message (503, no data) on the reply subject, as nats.js
 * reads it. `failAll` fails every request still waiting: call it when the connection drops,
 * because their replies are lost with it.
 *
 * Why not nats.js's `request`: it does the same on one inbox, but for every request it builds a
 * request object, a deferred and a timeout promise. On every answered request it also builds a
 * NatsError it never throws, in its cancel path, and JavaScriptCore captures a stack for each.
 * Measured alone, 64 concurrent requests to an echo: 6.0-6.4 µs of CPU per request, both ends
 * together, against 10.1-12.6 µs with `nc.request` (bench/ANALYSIS.md, seventeenth session).
 */
export function createNatsRequests(nc: NatsConnection) {
  const inbox = createInbox()
  const waiting = new Map<string, Waiting>()
  let next = 0
  // Drained and closed with the connection (bus-nats.ts close).
  nc.subscribe(`${inbox}.*`, {
    callback: (error, msg) => {
      if (error) return // the requests waiting time out
      const token = msg.subject.slice(inbox.length + 1)
      const request = waiting.get(token)
      if (!request) return
      waiting.delete(token)
      clearTimeout(request.timer)
      if (msg.data.length === 0 && msg.headers?.code === 503) request.reject(new NoReply(ErrorCode.NoResponders))
      else request.resolve(msg.data)
    },
  })

  return {
    /** The reply's bytes; rejects with NoReply, or with what nats.js throws on publish (closed, too large). */
    request(subject: string, data: Uint8Array, timeoutMs: number, headers?: MsgHdrs): Promise<Uint8Array> {
      const token = String(++next)
      return new Promise<Uint8Array>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(token)
          reject(new NoReply(ErrorCode.Timeout))
        }, timeoutMs)
        waiting.set(token, { resolve, reject, timer })
        try {
          nc.publish(subject, data, { reply: `${inbox}.${token}`, headers })
        } catch (error) {
          waiting.delete(token)
          clearTimeout(timer)
          reject(error)
        }
      })
    },

    /** Fails every request still waiting with `error`. */
    failAll(error: unknown): void {
      for (const request of waiting.values()) {
        clearTimeout(request.timer)
        request.reject(error)
      }
      waiting.clear()
    },

    /** Requests waiting for their reply (for tests). */
    get waiting(): number {
      return waiting.size
    },
  }
}
