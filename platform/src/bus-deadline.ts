import { log } from './log'
import { busRequestsExpired } from './metrics'

/**
 * The header of a NATS request that carries its deadline: the time, in epoch milliseconds by the
 * caller's clock, when the caller stops waiting (its Date.now() plus its timeout).
 *
 * Why an absolute time and not the budget left: nats.js runs serve()'s callback as it parses the
 * socket's bytes, and the callback starts the handler at once, so a budget counted from arrival
 * would never have run out there. The stale work of an overload waits before arrival: in the
 * NATS server's buffer for the connection and in the socket, while the service's event loop is
 * busy. Only a time both ends read sees that wait.
 */
export const DEADLINE_HEADER = 'x-deadline'

/**
 * How far past a deadline the serving clock must be before a request is shed: room for clocks
 * that disagree (NTP keeps hosts within milliseconds). A serving clock behind the caller's sheds
 * that much later; one ahead sheds a request that waited longer than its timeout less the
 * difference. A request that arrives at once is shed only when the serving clock is ahead by more
 * than its whole timeout and this allowance (the resolver's look-ups wait 3 s, others 10 s by
 * default), and then every one is: the warn line's `late_ms` stays near that difference while
 * nothing is busy.
 */
export const DEADLINE_SKEW_MS = 250

/** A subject's shed requests are logged at most once in this long (every one is counted). */
export const EXPIRED_LOG_EVERY_MS = 10_000

/** The value of DEADLINE_HEADER for a request that waits `timeoutMs` from now. */
export const deadlineIn = (timeoutMs: number): string => String(Date.now() + timeoutMs)

/**
 * How many milliseconds a request to be shed is past its deadline (more than DEADLINE_SKEW_MS);
 * 0 for one to run: within it, or without the header (a peer from before deadlines).
 */
export function expiredBy(header: string | undefined, now = Date.now()): number {
  const deadline = Number(header)
  return deadline > 0 && now - deadline > DEADLINE_SKEW_MS ? now - deadline : 0
}

/**
 * What a shed request is answered: its caller has almost always given up (the reply is dropped),
 * but one whose clock is behind the service's still waits, and a 504 now beats one later.
 */
export const EXPIRED_REPLY = new TextEncoder().encode(
  JSON.stringify({ ok: false, error: { code: 'timeout', message: 'the request was past its deadline when the service got to it' } }),
)

/**
 * Counts a shed request in lr_bus_requests_expired_total and logs the subject's sheds at `warn`
 * at most once per EXPIRED_LOG_EVERY_MS: the first at once, then how many since the last line.
 * An overload sheds thousands a second; a line each would be a flood of its own.
 */
export function expiredRequestLog(everyMs = EXPIRED_LOG_EVERY_MS): (subject: string, lateMs: number) => void {
  const bySubject = new Map<string, { loggedAt: number; shed: number; lateMs: number }>()
  return (subject, lateMs) => {
    busRequestsExpired.inc({ subject })
    let seen = bySubject.get(subject)
    if (!seen) bySubject.set(subject, (seen = { loggedAt: Number.NEGATIVE_INFINITY, shed: 0, lateMs: 0 }))
    seen.shed++
    seen.lateMs = Math.max(seen.lateMs, lateMs)
    const now = performance.now()
    if (now - seen.loggedAt < everyMs) return
    log().warn({ subject, expired: seen.shed, late_ms: Math.round(seen.lateMs) }, 'bus requests past their deadline were not handled')
    Object.assign(seen, { loggedAt: now, shed: 0, lateMs: 0 })
  }
}
