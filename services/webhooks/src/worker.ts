import { WEBHOOK_ATTEMPTS_KEPT } from '@lr/proto'
import { errorFields, log } from '@lr/platform/log'
import { reportMetrics, webhookAttempts, webhookEndpointsDisabled, webhookGivenUp } from '@lr/platform/metrics'
import { connectionsOf } from './destination'
import { postTo } from './post'
import type { StoredAttempt, StoredMessage, WebhookStore } from './ports'
import { storeClockOf } from '@lr/platform/store-clock'
import type { WebhookSettings } from './service'
import { sign } from './signature'
import { createSlots } from './slots'

/** Longest pause between two looks for due messages. */
const POLL_MS = 500
/** How often settled messages are purged; they are kept twice the retry window (a redelivered event still dedupes). */
const PURGE_EVERY_MS = 10 * 60_000

export interface DeliveryWorkerDeps {
  store: WebhookStore
  settings: WebhookSettings
  /** The store's clock unless set (storeClockOf). */
  nowMs?: () => number
  /**
   * Resolves a host's addresses for each attempt, which connects to them (no second lookup);
   * default the system resolver (tests give their own).
   */
  resolve?: (host: string) => Promise<string[]>
}

/**
 * Why a request failed, as the endpoint's owner reads it in its deliveries: the runtime's message
 * without the advice Bun appends for its own users ("For more information, pass `verbose: true`
 * in the second argument to fetch()").
 */
export const failureOf = (error: unknown) => String((error as Error)?.message ?? error).replace(/\s*For more information, pass `verbose: true`[^]*$/, '')

/** Delay before attempt n + 1 after n failed: base * 2^(n-1), at most max, with ±25 % jitter. */
export function retryDelay(settings: WebhookSettings, attempts: number): number {
  const delay = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.min(attempts - 1, 40))
  return Math.round(delay * (0.75 + Math.random() * 0.5))
}

/**
 * The delivery loop: works from the store only, so a restart (even kill -9) loses nothing. A due
 * message is claimed (compare-and-set, so replicas never send it twice at once; a crashed worker's
 * claim runs out after the timeout and it is sent again: at least once), POSTed signed, and
 * settled: delivered on a 2xx, else retried with backoff until the retry window closes. An
 * endpoint whose every delivery failed for the whole window is disabled. At most PER_ENDPOINT
 * attempts go to one endpoint at once (src/slots.ts): a slow endpoint delays only its own.
 */
export function createDeliveryWorker(deps: DeliveryWorkerDeps) {
  const { store, settings } = deps
  reportMetrics(webhookAttempts, webhookGivenUp, webhookEndpointsDisabled)
  const nowMs = deps.nowMs ?? storeClockOf(store)
  const inFlight = new Set<Promise<void>>()
  const slots = createSlots()
  let running = false
  let loop: Promise<void> | undefined
  let nudge: (() => void) | undefined
  // Set by a nudge that came while a look ran (none waited): the loop looks again at once, rather
  // than leaving a wake or an ended attempt to the next poll.
  let nudged = false
  const poke = () => {
    nudged = true
    nudge?.()
  }
  let purged = 0
  const claimMs = settings.timeoutMs + 5_000

  async function send(message: StoredMessage): Promise<{ http_status: number | null; error: string | null }> {
    const endpoint = await store.getEndpoint(message.library, message.endpoint_id)
    if (!endpoint) return { http_status: null, error: 'endpoint deleted' }
    if (endpoint.status !== 'enabled') return { http_status: null, error: 'endpoint disabled' }
    const checked = await connectionsOf(endpoint.url, settings.allowPrivate, deps.resolve)
    if ('problem' in checked) return { http_status: null, error: checked.problem }
    const timestamp = Math.floor(nowMs() / 1000)
    try {
      const response = await postTo(checked.connections, {
        method: 'POST',
        body: message.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(settings.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'LibraryRecords-Webhooks/1',
          'webhook-id': message.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': sign(endpoint.secret, message.id, timestamp, message.body),
        },
      })
      await response.body?.cancel().catch(() => undefined)
      const ok = response.status >= 200 && response.status < 300
      return { http_status: response.status, error: ok ? null : `answered ${response.status}` }
    } catch (error) {
      const name = (error as Error).name
      return { http_status: null, error: name === 'TimeoutError' ? `no answer within ${settings.timeoutMs} ms` : `request failed: ${failureOf(error)}` }
    }
  }

  async function attempt(message: StoredMessage): Promise<void> {
    const started = nowMs()
    const outcome = await send(message)
    const now = nowMs()
    const delivered = outcome.error === null
    let next: number | null = null
    if (!delivered && outcome.error !== 'endpoint deleted' && outcome.error !== 'endpoint disabled') {
      const at = now + retryDelay(settings, message.attempts)
      if (at <= message.created_at + settings.retryWindowMs) next = at
    }
    const state = delivered ? 'delivered' : next === null ? 'failed' : 'pending'
    const row: StoredAttempt = {
      endpoint_id: message.endpoint_id, webhook_id: message.id, event_type: message.event_type, event_id: message.event_id,
      attempt: message.attempts, status: delivered ? 'delivered' : 'failed', http_status: outcome.http_status, error: outcome.error,
      attempted_at: started, duration_ms: Math.max(0, now - started), next_attempt_at: next,
    }
    // Stored after the delete, by an intake that still remembered the endpoint: left pending, it
    // was claimed again each time its claim ran out, for ever.
    if (outcome.error === 'endpoint deleted') return store.dropRemains(message.endpoint_id)
    await store.settle({ ...message, state, next_attempt_at: next }, row, WEBHOOK_ATTEMPTS_KEPT)
    webhookAttempts.inc({ event_type: message.event_type, outcome: row.status })
    if (state === 'failed') webhookGivenUp.inc()
    if (state === 'failed' && outcome.error !== 'endpoint disabled') {
      // Given up: disabled when nothing reached the endpoint since this message was stored.
      const endpoint = await store.getEndpoint(message.library, message.endpoint_id)
      if (endpoint && endpoint.status === 'enabled' && (endpoint.last_success_at ?? 0) < message.created_at) {
        await store.disableEndpoint(endpoint.id, Math.floor(now / 1000))
        webhookEndpointsDisabled.inc()
        log().warn({ webhook: endpoint.id, library: endpoint.library }, 'webhook endpoint disabled: every delivery failed for the retry window')
      }
    }
  }

  function begin(claimed: StoredMessage): void {
    slots.take(claimed.endpoint_id, claimed.library)
    const run = attempt(claimed).catch((error) => log().error({ webhook_id: claimed.id, ...errorFields(error) }, 'webhook attempt not recorded; retried after its claim runs out'))
    inFlight.add(run)
    void run.finally(() => {
      inFlight.delete(run)
      slots.give(claimed.endpoint_id)
      poke()
    })
  }

  /**
   * Claims a due message and starts its attempt; false when another worker took it, or once the
   * worker is stopping: a look under way when stop() came would otherwise claim and send the rest
   * of what it read (32 at most, one claim after another), each new attempt holding the stop for up
   * to WEBHOOK_TIMEOUT_MS. Left unclaimed, they are due at once for the other replicas.
   */
  async function start(candidate: StoredMessage): Promise<boolean> {
    if (!running) return false
    const claimed = await store.claim(candidate.id, candidate.next_attempt_at!, nowMs() + claimMs)
    if (claimed) begin(claimed)
    return claimed !== null
  }

  /** While skipping looks wait: endpoints whose attempts ended, or that were given new messages, take their due ones. */
  async function refill(): Promise<void> {
    for (const endpointId of slots.marked()) {
      const free = slots.free(endpointId)
      if (free > 0) for (const candidate of await store.dueOf(endpointId, nowMs(), free)) if (!slots.full(candidate.endpoint_id, candidate.library)) await start(candidate)
    }
  }

  /**
   * Starts attempts of due messages while there is room, at most PER_ENDPOINT per endpoint (the
   * store skips the full ones); answers how long to wait before the next look (0: look now).
   */
  async function tick(idleMs: number): Promise<number> {
    if (nowMs() - purged >= PURGE_EVERY_MS) {
      purged = nowMs()
      await store.purge(purged - 2 * settings.retryWindowMs)
    }
    const room = slots.room()
    if (room <= 0) return idleMs
    let started = 0
    while (running) {
      const skip = slots.fullEndpoints()
      if (skip.length > 0 && slots.skippingWait() > 0) {
        await refill()
        return Math.min(idleMs, slots.skippingWait())
      }
      slots.marked() // this look reads their messages too
      const look = () => store.due(nowMs(), slots.room(), skip)
      const due = skip.length > 0 ? await slots.skipping(look) : await look()
      // An endpoint that fills up within this batch has its remaining messages passed over: the
      // next round skips it in the store, so that other endpoints' messages behind them are read.
      let passedOver = false
      const fullLibraries = new Set<string>()
      for (const candidate of due) {
        if (!slots.full(candidate.endpoint_id, candidate.library)) {
          if (await start(candidate)) started++
          continue
        }
        passedOver = true
        if (slots.libraryFull(candidate.library)) fullLibraries.add(candidate.library)
      }
      // A full library's other endpoints (ten at most) are skipped from the next look on, rather
      // than met one look at a time, each look spaced out (SKIPPING_COST_RATIO).
      for (const library of fullLibraries) slots.note(library, (await store.listEndpoints(library)).map((endpoint) => endpoint.id))
      if (!passedOver || slots.room() <= 0) break
    }
    return started === room ? 0 : idleMs
  }

  return {
    start() {
      running = true
      loop = (async () => {
        const idleMs = Math.min(POLL_MS, settings.retryBaseMs)
        while (running) {
          let waitMs = idleMs
          nudged = false
          try {
            waitMs = await tick(idleMs)
          } catch (error) {
            log().error({ ...errorFields(error) }, 'reading due webhook deliveries failed')
          }
          if (waitMs <= 0 || nudged) continue
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, waitMs)
            nudge = () => {
              clearTimeout(timer)
              resolve()
            }
          })
          nudge = undefined
        }
      })()
    },
    /** New messages are due (of these endpoints, when known): look now rather than at the next poll. */
    wake(endpointIds: Iterable<string> = []) {
      slots.mark(endpointIds)
      poke()
    },
    async stop() {
      running = false
      nudge?.()
      await loop
      await Promise.all(inFlight)
    },
  }
}
