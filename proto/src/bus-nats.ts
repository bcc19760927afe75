import { connect, ErrorCode, type NatsConnection, type NatsError } from 'nats'
import { AppError } from './errors'
import { type Bus, DEFAULT_TIMEOUT_MS, type Reply, runHandler, unwrapReply } from './bus'

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const encode = (value: unknown) => encoder.encode(JSON.stringify(value))
const decode = (data: Uint8Array): unknown => (data.length === 0 ? undefined : JSON.parse(decoder.decode(data)))

/** Connects to NATS and returns a Bus over it; its own entry so importing proto never pulls `nats`. */
export async function createNatsBus(url: string, name: string): Promise<Bus & { connection: NatsConnection }> {
  const nc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 250 })
  return wrapNatsConnection(nc)
}

export function wrapNatsConnection(nc: NatsConnection): Bus & { connection: NatsConnection } {
  function translate(error: unknown, subject: string): AppError {
    const code = (error as NatsError)?.code
    if (code === ErrorCode.NoResponders) return new AppError('unavailable', `no service answers ${subject}`)
    if (code === ErrorCode.Timeout) return new AppError('timeout', `${subject} did not answer in time`)
    if (code === ErrorCode.MaxPayloadExceeded) return new AppError('payload_too_large', 'request is too large to forward')
    if (code === ErrorCode.ConnectionClosed || code === ErrorCode.Disconnect)
      return new AppError('unavailable', 'message bus is not connected')
    return new AppError('unavailable', `message bus error: ${(error as Error)?.message ?? error}`)
  }

  return {
    connection: nc,

    async request<T>(subject: string, payload: unknown, opts?: { timeoutMs?: number }): Promise<T> {
      let reply: Reply<T>
      try {
        const msg = await nc.request(subject, encode(payload), { timeout: opts?.timeoutMs ?? DEFAULT_TIMEOUT_MS })
        reply = decode(msg.data) as Reply<T>
      } catch (error) {
        throw translate(error, subject)
      }
      return unwrapReply(reply)
    },

    serve(subject, handler, opts) {
      const sub = nc.subscribe(subject, {
        queue: opts?.queue,
        callback: (err, msg) => {
          if (err) return console.error(`[bus] subscription ${subject} failed:`, err)
          let payload: unknown
          try {
            payload = decode(msg.data)
          } catch {
            return msg.respond(encode({ ok: false, error: { code: 'bad_request', message: 'malformed message' } }))
          }
          void runHandler(handler, payload, subject).then((reply) => msg.respond(encode(reply)))
        },
      })
      return () => sub.unsubscribe()
    },

    async publish(subject, event) {
      nc.publish(subject, encode(event))
    },

    subscribe(pattern, handler, opts) {
      const sub = nc.subscribe(pattern, {
        queue: opts?.queue,
        callback: (err, msg) => {
          if (err) return console.error(`[bus] subscription ${pattern} failed:`, err)
          Promise.resolve()
            .then(() => handler(decode(msg.data), msg.subject))
            .catch((error) => console.error(`[bus] subscriber of ${pattern} failed:`, error))
        },
      })
      return () => sub.unsubscribe()
    },

    async ping() {
      if (nc.isClosed()) return false
      const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000))
      return Promise.race([nc.rtt().then(() => true, () => false), timeout])
    },

    async close() {
      if (!nc.isClosed()) await nc.drain()
    },
  }
}
