import { AppError } from '@lr/proto'
import { type Bus, DEFAULT_MAX_PAYLOAD, DEFAULT_TIMEOUT_MS, type EventHandler, type Handler, type Reply } from '@lr/proto'
import { deadlineFor } from './bus-deadline'
import { dataBytesOf, encodeReply, observeRound, replyWithin, requestTooLarge, runHandler, tokensMatch, unwrapReply } from './bus-handler'
import { errorFields, log } from './log'
import { currentRequestId } from './request-context'
import { countedInShutdown } from './shutdown-failures'

/**
 * What NATS would deliver: a JSON copy. One-process mode can then neither lean on shared
 * references nor on values JSON does not carry (Date, Map, undefined in arrays), and the copy
 * costs less than half of a structuredClone of the same records (measured: 55 vs 126 µs for a
 * 100-record list reply). The text in between is what the size limit applies to, as on NATS.
 */
const encoder = new TextEncoder()
const parse = (text: string | undefined) => (text === undefined ? undefined : JSON.parse(text))

/** Bytes the envelope `{"ok":true,"data":...}` adds around the data's JSON text. */
const ENVELOPE_BYTES = 20

/**
 * The JSON copy of a flat value, made without its text, or undefined when the value is not flat
 * or might be over `max` bytes as text. Flat: a plain object whose values are strings, finite
 * numbers other than -0, booleans or null (an export chunk: its CSV and a cursor; a scan event).
 * Its JSON copy is exactly a shallow copy, since strings are immutable; writing and parsing the
 * text cost a fifth of a one-process export (the profile: 9 % stringify, 10 % parse, for 130 KB
 * of CSV per chunk). The size limit holds by a bound: JSON text takes at most 6 bytes per UTF-16
 * unit (a `\u00XX` escape); a value that might be over it takes the exact path, which measures
 * its text.
 */
function flatCopyWithin(data: unknown, max = Number.POSITIVE_INFINITY): Record<string, unknown> | undefined {
  if (data === null || typeof data !== 'object' || Object.getPrototypeOf(data) !== Object.prototype) return undefined
  const copy: Record<string, unknown> = {}
  let bound = ENVELOPE_BYTES + 2
  for (const key of Object.keys(data)) {
    const value = (data as Record<string, unknown>)[key]
    if (typeof value === 'string') bound += 6 * value.length + 2
    else if (typeof value === 'number') {
      if (!Number.isFinite(value) || Object.is(value, -0)) return undefined
      bound += 24
    } else if (typeof value === 'boolean' || value === null) bound += 5
    else return undefined
    bound += 6 * key.length + 4
    copy[key] = value
  }
  return bound <= max ? copy : undefined
}

export interface LocalBusOptions {
  /** BUS_MAX_PAYLOAD_BYTES: the largest request or reply; default DEFAULT_MAX_PAYLOAD. */
  maxPayload?: number
}

interface Subscriber {
  pattern: string
  /** The pattern split at its dots, once. */
  tokens: string[]
  handler: EventHandler
  queue?: string
}

function subscriberFailed(sub: Subscriber, error: unknown): void {
  if (!countedInShutdown('bus subscriber failed', error)) log().error({ pattern: sub.pattern, ...errorFields(error) }, 'bus subscriber failed')
}

/**
 * The in-process adapter: every payload, reply and event travels as a JSON copy, under the same
 * size limit as NATS; queue groups share events as NATS shares them (one member each).
 */
export function createLocalBus(options: LocalBusOptions = {}): Bus {
  const maxPayload = options.maxPayload ?? DEFAULT_MAX_PAYLOAD
  const handlers = new Map<string, { list: Handler[]; next: number }>()
  const plain = new Set<Subscriber>()
  /** Queue groups by name: each event goes to one of a group's members, in turn. */
  const groups = new Map<string, { members: Subscriber[]; turn: number }>()
  let closed = false

  /**
   * One request as NATS would carry it: a copy in, the reply's JSON text out, the request id
   * alongside. With `flat`, a flat reply comes out as its copy instead (flatCopyWithin).
   */
  async function replyText(subject: string, payload: unknown, opts?: { timeoutMs?: number }, flat?: false): Promise<string>
  async function replyText(subject: string, payload: unknown, opts: { timeoutMs?: number } | undefined, flat: true): Promise<string | Reply<unknown>>
  async function replyText(subject: string, payload: unknown, opts?: { timeoutMs?: number }, flat = false): Promise<string | Reply<unknown>> {
    if (closed) throw new AppError('unavailable', 'message bus is closed', { retryAfter: 1 })
    const sent = payload === undefined ? undefined : JSON.stringify(payload)
    // UTF-8 never takes more than 3 bytes per UTF-16 unit: count exactly only near the limit.
    if (sent !== undefined && sent.length * 3 > maxPayload && Buffer.byteLength(sent) > maxPayload) throw requestTooLarge(Buffer.byteLength(sent), maxPayload)
    const entry = handlers.get(subject)
    if (!entry || entry.list.length === 0) throw new AppError('unavailable', `no service answers ${subject}`)
    const handler = entry.list[entry.next++ % entry.list.length]!
    // As over NATS, the handler's own requests wait no longer than this one's caller (bus-deadline.ts).
    const now = Date.now()
    const deadline = deadlineFor(subject, opts?.timeoutMs ?? DEFAULT_TIMEOUT_MS, now)
    let timer: Timer | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AppError('timeout', `${subject} did not answer in time`)), deadline - now)
    })
    try {
      const reply = await Promise.race([runHandler(handler, parse(sent), subject, currentRequestId(), deadline), timeout])
      const copy = flat && reply.ok ? flatCopyWithin(reply.data, maxPayload) : undefined
      return copy ? { ok: true, data: copy } : replyWithin(encodeReply(reply), maxPayload, subject)
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Who matches a subject: the plain subscribers and, per queue group, its matching members.
   * Remembered per subject (every scan of a code publishes on the same one), forgotten whenever
   * anyone subscribes or unsubscribes; bounded, as subjects carry codes.
   */
  const matching = new Map<string, { plain: Subscriber[]; groups: { group: { turn: number }; members: Subscriber[] }[] }>()
  const MAX_MATCHED_SUBJECTS = 10_000
  function matchesOf(subject: string) {
    let found = matching.get(subject)
    if (!found) {
      const tokens = subject.split('.')
      found = { plain: [], groups: [] }
      for (const sub of plain) if (tokensMatch(sub.tokens, tokens)) found.plain.push(sub)
      for (const group of groups.values()) {
        const members = group.members.filter((sub) => tokensMatch(sub.tokens, tokens))
        if (members.length > 0) found.groups.push({ group, members })
      }
      if (matching.size >= MAX_MATCHED_SUBJECTS) matching.clear()
      matching.set(subject, found)
    }
    return found
  }

  /**
   * Hands an event to one subscriber; a failure, thrown or rejected, is logged. A handler that
   * returns no promise (the scan sources: one event per redirect) costs no promise here.
   */
  function deliver(sub: Subscriber, event: unknown, subject: string): void {
    try {
      const done = sub.handler(event, subject)
      if (done instanceof Promise) done.catch((error) => subscriberFailed(sub, error))
    } catch (error) {
      subscriberFailed(sub, error)
    }
  }

  /**
   * publish with `settled`: delivered as any event (after the publisher moves on, a copy each),
   * answered once every handler has settled; a failure is logged, as `deliver` does.
   */
  async function publishSettled(targets: Subscriber[], subject: string, event: unknown): Promise<void> {
    const sent = JSON.stringify(event)
    await Promise.all(
      targets.map(
        (sub) =>
          new Promise<void>((resolve) =>
            queueMicrotask(() => {
              try {
                Promise.resolve(sub.handler(parse(sent), subject)).then(resolve, (error) => (subscriberFailed(sub, error), resolve()))
              } catch (error) {
                subscriberFailed(sub, error)
                resolve()
              }
            }),
          ),
      ),
    )
  }

  /** The subscribers an event reaches: every one without a queue, and one member of each queue group. */
  function recipients(subject: string): Subscriber[] {
    const { plain: out, groups: matched } = matchesOf(subject)
    if (matched.length === 0) return out
    const all = out.slice()
    for (const { group, members } of matched) all.push(members[group.turn++ % members.length]!)
    return all
  }

  return {
    maxPayload,

    request<T>(subject: string, payload: unknown, opts?: { timeoutMs?: number }): Promise<T> {
      return observeRound(subject, async () => {
        const reply = await replyText(subject, payload, opts, true)
        return unwrapReply(typeof reply === 'string' ? parse(reply) : reply) as T
      })
    },

    requestJson(subject, payload, opts) {
      return observeRound(subject, async () => dataBytesOf(encoder.encode(await replyText(subject, payload, opts))))
    },

    serve(subject, handler) {
      const entry = handlers.get(subject) ?? { list: [], next: 0 }
      entry.list.push(handler)
      handlers.set(subject, entry)
      return () => {
        entry.list = entry.list.filter((h) => h !== handler)
      }
    },

    async publish(subject, event, opts) {
      if (closed) throw new AppError('unavailable', 'message bus is closed', { retryAfter: 1 })
      const targets = recipients(subject)
      if (targets.length === 0) return
      if (opts?.settled) return publishSettled(targets, subject, event)
      // Events are delivered after the publisher moves on, as over NATS, each recipient with its
      // own copy: of a flat event (a scan's, one per redirect) a shallow one, else a parse of one text.
      const flat = flatCopyWithin(event)
      if (flat) {
        // Copies made now, before any subscriber runs; the last one gets the copy itself.
        for (let i = 0; i < targets.length; i++) {
          const sub = targets[i]!
          const copy = i === targets.length - 1 ? flat : { ...flat }
          queueMicrotask(() => deliver(sub, copy, subject))
        }
        return
      }
      const sent = JSON.stringify(event)
      for (const sub of targets) queueMicrotask(() => deliver(sub, parse(sent), subject))
    },

    subscribe(pattern, handler, opts) {
      const sub: Subscriber = { pattern, tokens: pattern.split('.'), handler, queue: opts?.queue }
      matching.clear()
      if (sub.queue === undefined) {
        plain.add(sub)
        return () => {
          matching.clear()
          plain.delete(sub)
        }
      }
      const group = groups.get(sub.queue) ?? { members: [], turn: 0 }
      group.members.push(sub)
      groups.set(sub.queue, group)
      return () => {
        matching.clear()
        group.members = group.members.filter((member) => member !== sub)
        if (group.members.length === 0) groups.delete(sub.queue!)
      }
    },

    subscribed(subject) {
      const { plain: some, groups: matched } = matchesOf(subject)
      return some.length > 0 || matched.length > 0
    },

    async ping() {
      return !closed
    },

    async close() {
      closed = true
      handlers.clear()
      plain.clear()
      groups.clear()
      matching.clear()
    },
  }
}
