import { AppError } from '@lr/proto'
import { log } from './log'
import { busRequestsExpired } from './metrics'
import { currentDeadline } from './request-context'

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

/** The deadline DEADLINE_HEADER carries, or undefined without one (a peer from before deadlines). */
export function deadlineOf(header: string | undefined): number | undefined {
  const deadline = Number(header)
  return deadline > 0 ? deadline : undefined
}

/**
 * How many milliseconds a request to be shed is past its deadline (more than DEADLINE_SKEW_MS);
 * 0 for one to run: within it, or without one.
 */
export function expiredBy(deadline: number | undefined, now = Date.now()): number {
  return deadline !== undefined && now - deadline > DEADLINE_SKEW_MS ? now - deadline : 0
}

/**
 * The deadline of a request sent at `now` that would wait `timeoutMs`: that, or the deadline of
 * the request being handled when it is earlier (request-context.ts). Past the time its caller
 * stops waiting, a handler's own request serves no one: dynamic asking analytics for a capped
 * code's scans, or analytics asking dynamic for a library's codes, kept an overloaded service
 * waiting their full timeout after the API had answered 504. When that deadline has passed
 * already, nothing is sent: AppError('timeout') at once.
 *
 * No DEADLINE_SKEW_MS here: that allowance is for the moment a request is shed, on a clock that
 * may differ from its caller's. The deadline travels on as it is, so each service down the line
 * measures it against the first caller's clock and adds the allowance once.
 */
export function deadlineFor(subject: string, timeoutMs: number, now: number): number {
  const own = now + timeoutMs
  const inherited = currentDeadline()
  if (inherited === undefined || inherited >= own) return own
  if (inherited <= now) throw new AppError('timeout', `${subject} was not asked: the request being handled is past its deadline`)
  return inherited
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
