import { createInbox, type Msg, type NatsConnection } from 'nats'
import { subjectMatches } from './bus-handler'
import { log } from './log'
import { within } from './within'
import { eventsUnsettled, reportMetrics } from './metrics'

/**
 * `publish(..., { settled: true })` over NATS. The in-process bus knows every subscriber and
 * waits for each; over NATS a publisher cannot see who subscribed. So a subscriber whose
 * handling a publisher must wait for (a resolver replica: "a PATCHed destination is used by the
 * very next scan") says so, `subscribe(..., { settles: true })`, and its bus:
 * - announces itself and its patterns on SETTLERS.here: at start, every PRESENCE_MS, after a
 *   reconnect, and when a bus that just started asks (SETTLERS.ask);
 * - answers each event it has handled on the event's reply subject, with its id;
 * - says SETTLERS.gone when it stops serving.
 * A `settled` publish then waits for the answer of every settler it knows whose pattern matches
 * the subject, at most `settleTimeoutMs`. One that does not answer in time is counted
 * (lr_bus_events_unsettled_total), logged, and not waited for again until it announces itself
 * once more; one not heard of for PRESENCE_EXPIRES_MS is gone (a killed or frozen process).
 */
export const SETTLERS = { here: '_lr.settlers.here', gone: '_lr.settlers.gone', ask: '_lr.settlers.ask' } as const
export const PRESENCE_MS = 2_000
export const PRESENCE_EXPIRES_MS = 5_000
/** Above the resolver threads' own cap (1 s per thread, threads.ts), so a slow thread still answers in time. */
export const SETTLE_TIMEOUT_MS = 1_500

type Presence = { id: string; patterns: string[] }
type Member = { patterns: string[]; seen: number; late: boolean }

export interface Settlers {
  /** This bus settles events on `pattern`; returns the release. */
  add(pattern: string): () => void
  /** Answers a handled event's publisher (when it waits: the event has a reply subject). */
  answer(msg: Msg, ok: boolean): void
  /** Publishes `data` and resolves once every known settler of `subject` has answered, or in time. */
  publishSettled(subject: string, data: Uint8Array, connected: boolean): Promise<void>
  /** After a reconnect: announce again, and ask who is there (presences were missed meanwhile). */
  reconnected(): void
  /** Stops announcing and says gone; events already taken are still answered. */
  leave(): void
}

export function createSettlers(nc: NatsConnection, options: { settleTimeoutMs?: number } = {}): Settlers {
  const settleTimeoutMs = options.settleTimeoutMs ?? SETTLE_TIMEOUT_MS
  const id = crypto.randomUUID()
  const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))
  const own = new Map<string, number>()
  const members = new Map<string, Member>()
  let presence: Timer | undefined
  let announced = false

  const announce = () => {
    if (own.size === 0 || nc.isClosed()) return
    nc.publish(SETTLERS.here, encode({ id, patterns: [...own.keys()] } satisfies Presence))
    announced = true
  }
  function leave() {
    clearInterval(presence)
    presence = undefined
    own.clear()
    if (announced && !nc.isClosed()) nc.publish(SETTLERS.gone, encode({ id, patterns: [] } satisfies Presence))
    announced = false
  }
  nc.subscribe('_lr.settlers.*', {
    callback: (err, msg) => {
      if (err) return
      try {
        if (msg.subject === SETTLERS.ask) return announce()
        const presence = JSON.parse(new TextDecoder().decode(msg.data)) as Presence
        if (msg.subject === SETTLERS.gone) members.delete(presence.id)
        else if (msg.subject === SETTLERS.here && Array.isArray(presence.patterns)) members.set(presence.id, { patterns: presence.patterns, seen: performance.now(), late: false })
      } catch {
        // Not ours to read: ignored.
      }
    },
  })
  // A bus that just started would otherwise know no settler for up to PRESENCE_MS.
  nc.publish(SETTLERS.ask)

  /** The settlers an event on `subject` waits for: heard of lately, matching, and not late last time. */
  function expectedFor(subject: string): Set<string> {
    const now = performance.now()
    const expected = new Set<string>()
    for (const [member, { patterns, seen, late }] of members) {
      if (now - seen > PRESENCE_EXPIRES_MS) members.delete(member)
      else if (!late && patterns.some((pattern) => subjectMatches(pattern, subject))) expected.add(member)
    }
    return expected
  }

  return {
    add(pattern) {
      own.set(pattern, (own.get(pattern) ?? 0) + 1)
      announce()
      presence ??= setInterval(announce, PRESENCE_MS)
      presence.unref?.()
      let released = false
      return () => {
        if (released) return
        released = true
        const left = own.get(pattern)! - 1
        if (left > 0) own.set(pattern, left)
        else own.delete(pattern)
        if (own.size === 0) leave()
        else announce()
      }
    },

    answer(msg, ok) {
      if (msg.reply && !nc.isClosed()) msg.respond(encode({ id, ok }))
    },

    async publishSettled(subject, data, connected) {
      // Only a bus that publishes settled (dynamic's) lists lr_bus_events_unsettled_total, from its first.
      reportMetrics(eventsUnsettled)
      // Disconnected, no answer could come back before the reconnect: the publish waits in the
      // client's buffer, and the resolvers re-read a code they cached after 60 s in any case.
      const waiting = connected ? expectedFor(subject) : new Set<string>()
      if (waiting.size === 0) return nc.publish(subject, data)
      const inbox = createInbox()
      let answered!: () => void
      const all = new Promise<void>((resolve) => (answered = resolve))
      const failed: string[] = []
      const sub = nc.subscribe(inbox, {
        callback: (err, msg) => {
          if (err) return
          try {
            const answer = JSON.parse(new TextDecoder().decode(msg.data)) as { id: string; ok: boolean }
            if (!waiting.delete(answer.id)) return
            if (!answer.ok) failed.push(answer.id)
            if (waiting.size === 0) answered()
          } catch {
            // Not an answer: ignored.
          }
        },
      })
      try {
        nc.publish(subject, data, { reply: inbox })
        await within(settleTimeoutMs, all)
      } finally {
        sub.unsubscribe()
      }
      if (failed.length > 0) log().warn({ subject, settlers: failed }, 'a subscriber failed to handle a settled event')
      if (waiting.size === 0) return
      for (const member of waiting) {
        const known = members.get(member)
        if (known) known.late = true
      }
      eventsUnsettled.inc(waiting.size)
      log().warn({ subject, settlers: [...waiting], timeout_ms: settleTimeoutMs }, 'a subscriber did not settle an event in time; not waited for until it announces itself again')
    },

    reconnected() {
      announce()
      nc.publish(SETTLERS.ask)
    },

    leave,
  }
}
