import { log as processLog } from '@lr/platform/log'
import { outsideRequest } from '@lr/platform/request-context'
import type { RateLimiter } from './port'

export interface FailoverOptions {
  /** While degraded, how often the primary is tried again: by one request, or by a ping when none comes. */
  probeIntervalMs?: number
  /** How long a request (or /readyz) waits for the primary before it counts as unreachable. */
  timeoutMs?: number
  /** Where the two state changes are reported; the process logger (warn level) by default. */
  log?: (message: string) => void
  /** Clock in epoch ms. */
  now?: () => number
}

/** A limiter that knows when it is running on its fallback. */
export interface FailoverLimiter extends RateLimiter {
  /** True while the primary (shared Redis) is unreachable and limits are per process. */
  degraded(): boolean
}

/**
 * Why the primary failed, as far as the log and the recovery go: `network` (no connection, no
 * answer), `credentials` (Redis refuses this client's password or rights), `script` (Redis
 * answered the script with another error: out of memory under maxmemory, a read-only replica, MISCONF).
 */
type Cause = 'network' | 'credentials' | 'script'
function causeOf(error: unknown): Cause {
  if (/\b(NOAUTH|WRONGPASS|NOPERM)\b/.test(error instanceof Error ? error.message : String(error))) return 'credentials'
  return error instanceof Error && error.name === 'ReplyError' ? 'script' : 'network'
}

/**
 * Shared limits while the primary answers; per-process limits on the fallback while it does not,
 * so the API keeps serving through a Redis outage. Logs once when it degrades (again only when
 * the cause turns), once when it recovers. Requests admitted by the fallback are not replayed into Redis.
 *
 * While degraded it also pings the primary every probeIntervalMs, so it recovers (and /readyz
 * says so) without waiting for a request: a quiet gateway would otherwise stay degraded forever.
 * Not after Redis answered the script with an error: PING answers throughout that.
 */
export function createFailoverLimiter(primary: RateLimiter, fallback: RateLimiter, options: FailoverOptions = {}): FailoverLimiter {
  const { probeIntervalMs = 1_000, timeoutMs = 100, now = Date.now } = options
  // The limiter's state is the process's, not the request's that happened to notice it: its lines
  // carry no request_id, and the pinger made during a request does not keep that request's id.
  const write = options.log ?? ((message: string) => processLog().warn({}, message))
  const log = (message: string) => outsideRequest(() => write(message))
  let degraded = false
  let cause: Cause = 'network'
  let answered = false
  let probeAt = 0
  let pinger: Timer | undefined

  function degrade(error: unknown) {
    const message = error instanceof Error ? error.message : String(error)
    // Once more when the cause turns (from the network to the credentials, or back): a Redis that
    // came back from an outage with another password had left only the outage's line (ECONNREFUSED)
    // to read, while it was up and refusing this gateway (NOAUTH). One line per such turn, not per probe.
    const next = causeOf(error)
    // Redis answered (OOM, READONLY, NOPERM for the script...): PING answers too, so only a request
    // Redis takes again ends it. Recovering on a PING had logged "back" and out again once a second.
    answered = error instanceof Error && error.name === 'ReplyError'
    if (!degraded || next !== cause) {
      log(answered
        ? `rate limiter: Redis refuses the limiter's script (${message}); limiting per process until it takes it again`
        : `rate limiter: Redis unreachable (${message}); limiting per process until it returns`)
    }
    cause = next
    degraded = true
    probeAt = now() + probeIntervalMs // counted from the failure: a hung probe took a while
    pinger ??= outsideRequest(() => setInterval(() => void pingWhileDegraded(), probeIntervalMs))
    pinger.unref() // never what keeps the process alive
  }

  function recover() {
    if (degraded) log('rate limiter: Redis is back; limits are shared again')
    degraded = false
    clearInterval(pinger)
    pinger = undefined
  }

  async function pingWhileDegraded() {
    if (degraded && !answered && (await withTimeout(primary.ping()).catch(() => false))) recover()
  }

  /**
   * Bounds a call to the primary. When the bound is up, one more turn of the event loop before
   * giving up: timers run before the sockets are read, so in a loop that stalled past the bound
   * (the gateway starved of CPU, a long GC) a reply already in the socket would lose to the timer,
   * and a Redis that answered at once be taken for a dead one, every gateway then limiting on its own.
   */
  function withTimeout<T>(work: Promise<T>): Promise<T> {
    let timer: Timer | undefined
    const timeout = new Promise<never>((_, reject) => {
      const giveUp = () => reject(new Error(`no answer within ${timeoutMs} ms`))
      timer = setTimeout(() => (timer = setTimeout(giveUp, 0)), timeoutMs)
    })
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
  }

  return {
    async consume(key, policy) {
      if (!degraded || now() >= probeAt) {
        probeAt = now() + probeIntervalMs // one probe per interval while degraded
        try {
          const decision = await withTimeout(primary.consume(key, policy))
          recover()
          return decision
        } catch (error) {
          degrade(error)
        }
      }
      return fallback.consume(key, policy)
    },
    ping: () => withTimeout(primary.ping()).catch(() => false),
    degraded: () => degraded,
    async close() {
      clearInterval(pinger)
      pinger = undefined
      await Promise.all([primary.close(), fallback.close()])
    },
  }
}
