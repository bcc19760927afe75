import { AppError } from '@lr/proto'
import { type Bus, DEFAULT_TIMEOUT_MS, type EventHandler, type Handler } from '@lr/proto'
import { observeRequest, runHandler, subjectMatches, unwrapReply } from './bus-handler'
import { errorFields, log } from './log'
import { currentRequestId } from './request-context'

/**
 * What NATS would deliver: a JSON copy. One-process mode can then neither lean on shared
 * references nor on values JSON does not carry (Date, Map, undefined in arrays), and the copy
 * costs less than half of a structuredClone of the same records (measured: 55 vs 126 µs for a
 * 100-record list reply).
 */
const copy = <T>(value: T): T => (value === undefined ? value : JSON.parse(JSON.stringify(value)))

/** The in-process adapter: every payload, reply and event travels as a JSON copy. */
export function createLocalBus(): Bus {
  const handlers = new Map<string, { list: Handler[]; next: number }>()
  const subscribers = new Set<{ pattern: string; handler: EventHandler }>()

  /** One request as NATS would carry it: a copy in, a copy out, the request id alongside. */
  async function requestOnce<T>(subject: string, payload: unknown, opts?: { timeoutMs?: number }): Promise<T> {
    const entry = handlers.get(subject)
    if (!entry || entry.list.length === 0) throw new AppError('unavailable', `no service answers ${subject}`)
    const handler = entry.list[entry.next++ % entry.list.length]!
    let timer: Timer | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new AppError('timeout', `${subject} did not answer in time`)),
        opts?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      )
    })
    try {
      const reply = await Promise.race([runHandler(handler, copy(payload), subject, currentRequestId()), timeout])
      return unwrapReply(copy(reply)) as T
    } finally {
      clearTimeout(timer)
    }
  }

  return {
    async request<T>(subject: string, payload: unknown, opts?: { timeoutMs?: number }): Promise<T> {
      const started = performance.now()
      try {
        const data = await requestOnce<T>(subject, payload, opts)
        observeRequest(subject, started)
        return data
      } catch (error) {
        observeRequest(subject, started, error)
        throw error
      }
    },

    serve(subject, handler) {
      const entry = handlers.get(subject) ?? { list: [], next: 0 }
      entry.list.push(handler)
      handlers.set(subject, entry)
      return () => {
        entry.list = entry.list.filter((h) => h !== handler)
      }
    },

    async publish(subject, event) {
      for (const sub of subscribers) {
        if (!subjectMatches(sub.pattern, subject)) continue
        // Events are delivered after the publisher moves on, as over NATS.
        queueMicrotask(() => {
          Promise.resolve(sub.handler(copy(event), subject)).catch((error) =>
            log().error({ pattern: sub.pattern, ...errorFields(error) }, 'bus subscriber failed'),
          )
        })
      }
    },

    subscribe(pattern, handler) {
      const sub = { pattern, handler }
      subscribers.add(sub)
      return () => subscribers.delete(sub)
    },

    async ping() {
      return true
    },

    async close() {
      handlers.clear()
      subscribers.clear()
    },
  }
}
