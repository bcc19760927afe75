import { createHash } from 'node:crypto'
import { compileBodyCheck, orBadRequest } from '@lr/library-records'
import { nanoid } from 'nanoid'
import {
  AppError, checkOf, type Deleted, type KeyClaims, libraryOf, type Principal, RecordEvent, ScanEvent, WEBHOOK_ATTEMPTS_KEPT, WebhookCreateBody, type WebhookCreated,
  type WebhookDeliveries, type WebhookEndpoint, WEBHOOK_EVENT_TYPES, type WebhookEventType, type WebhookList, WEBHOOKS_PER_LIBRARY,
} from '@lr/proto'
import { idempotent } from '@lr/platform/idempotency'
import { log } from '@lr/platform/log'
import { destinationProblem, normalDestination } from './destination'
import { EndpointLimitReached, type StoredEndpoint, type StoredMessage, type WebhookStore } from './ports'
import { storeClockOf } from '@lr/platform/store-clock'
import { newSecret } from './signature'

export const MANAGE_FORBIDDEN = "only a team admin (or a personal library's owner) manages its webhooks; this key belongs to a writer"

/** The settings of docs/decisions.md "Webhooks" (proto/src/config.ts). */
export interface WebhookSettings {
  allowPrivate: boolean
  retryBaseMs: number
  retryMaxMs: number
  retryWindowMs: number
  timeoutMs: number
}

export interface WebhookDeps {
  store: WebhookStore
  settings: WebhookSettings
  /** The library of a dynamic code (asked of services/dynamic); null when never issued. */
  libraryOfCode(code: string): Promise<string | null>
  /** Current time in epoch milliseconds; the store's clock unless set (storeClockOf). */
  nowMs?: () => number
  /** Tells the delivery worker that new messages of these endpoints are due. */
  wake?: (endpointIds: Iterable<string>) => void
  /** Tells every replica (this one too) that a library's endpoints changed: WEBHOOKS_ENDPOINTS_CHANGED. */
  endpointsChanged?: (library: string) => Promise<void>
  /** The Idempotency-Key register shared with the other services that create (openKeyClaims); none on Mongo. */
  claims?: KeyClaims
}

export type WebhookService = ReturnType<typeof createWebhookService>

const publicOf = ({ id, url, events, status, created_at, disabled_at }: StoredEndpoint): WebhookEndpoint => ({ id, url, events, status, created_at, disabled_at })
/** Stable per event and endpoint: the `webhook-id` of every attempt. */
const webhookIdOf = (eventId: string, endpointId: string) => `msg_${createHash('sha256').update(`${eventId}\n${endpointId}`).digest('base64url').slice(0, 27)}`
/** Codes whose library is remembered (a code never moves to another library). */
const CODE_CACHE_MAX = 50_000
/**
 * How long a library's subscribers of an event type are remembered, so an event (a scan, every
 * write's record event) costs no store read. A new endpoint gets events at once: its creation is
 * announced to every replica (WEBHOOKS_ENDPOINTS_CHANGED); should that announcement be lost,
 * within this time. A remembered endpoint deleted or disabled meanwhile costs nothing: the worker
 * reads the endpoint before each attempt and drops the message.
 */
export const SUBSCRIBERS_TTL_MS = 2_000
const SUBSCRIBERS_MAX = 10_000
const limitReached = () => new AppError('bad_request', `a library has at most ${WEBHOOKS_PER_LIBRARY} webhooks; delete one first`)
/**
 * Seconds before an endpoint's created_at from which its events are sent. Subscribers are read
 * when the worker takes an event in, so one behind (a backlog of RECORD_EVENTS or of scan
 * batches) would send an endpoint created meanwhile events from before it existed: those are
 * dropped (sentSince). The event's time is its publisher's clock (records, dynamic, the
 * resolver), created_at whole seconds, floored, on the webhooks store's: a publisher running up to
 * a second behind still has a write made just after the create (its 201 came first) sent, for the
 * price of events up to two seconds older than the endpoint.
 */
const CLOCK_ALLOWANCE_S = 1
/** Whether an event of `happenedMs` (epoch ms) goes to the endpoint; one whose time did not parse (NaN) does. */
const sentSince = (endpoint: StoredEndpoint, happenedMs: number) => !(happenedMs < (endpoint.created_at - CLOCK_ALLOWANCE_S) * 1000)
/** The create body's check: the same clear messages as every record body. */
const checkCreate = compileBodyCheck(WebhookCreateBody)
/** A create's route in its receipt's fingerprint (fingerprintOf): the key of another route's request is 422. */
const CREATE_ROUTE = 'webhooks.create'

/**
 * Endpoint management (scoped to the principal's library, admins and owners only) and the
 * intake: each event becomes one stored message per subscribed, enabled endpoint.
 */
export function createWebhookService(deps: WebhookDeps) {
  const { store, settings, wake = () => undefined } = deps
  const nowMs = deps.nowMs ?? storeClockOf(store)
  const codeLibraries = new Map<string, string>()
  const subscribers = new Map<string, { endpoints: Promise<StoredEndpoint[]>; until: number }>()
  const subscribersKey = (library: string, type: WebhookEventType) => `${type}\n${library}`

  function subscribersOf(library: string, type: WebhookEventType): Promise<StoredEndpoint[]> {
    const now = nowMs()
    const key = subscribersKey(library, type)
    const known = subscribers.get(key)
    if (known && known.until > now) return known.endpoints
    if (subscribers.size >= SUBSCRIBERS_MAX) subscribers.clear()
    const endpoints = store.subscribers(library, type)
    subscribers.set(key, { endpoints, until: now + SUBSCRIBERS_TTL_MS })
    endpoints.catch(() => subscribers.delete(key))
    return endpoints
  }
  const forget = (library: string) => {
    for (const type of WEBHOOK_EVENT_TYPES) subscribers.delete(subscribersKey(library, type))
  }

  function manager(principal: Principal): string {
    if (principal.team_id !== null && principal.role !== 'admin') throw new AppError('forbidden', MANAGE_FORBIDDEN)
    return libraryOf(principal)
  }
  async function found(library: string, id: string): Promise<StoredEndpoint> {
    const endpoint = await store.getEndpoint(library, id)
    if (!endpoint) throw new AppError('not_found', `no webhook ${JSON.stringify(id.slice(0, 100))} in this library`)
    return endpoint
  }

  /**
   * Adds the messages of one event, one per subscribed endpoint that existed then (sentSince), to
   * `into`. The caller stores a whole batch's in one enqueue: one transaction per scan made the
   * intake of a scan webhook slower than the resolver, and the scans waiting for it, and for
   * analytics on the same thread, were dropped past their buffers (bench/ANALYSIS.md,
   * twenty-ninth session).
   */
  async function fanOut(into: StoredMessage[], library: string, type: WebhookEventType, eventId: string, timestamp: string, data: unknown): Promise<void> {
    const happenedMs = Date.parse(timestamp)
    const endpoints = (await subscribersOf(library, type)).filter((endpoint) => sentSince(endpoint, happenedMs))
    if (endpoints.length === 0) return
    const body = JSON.stringify({ type, timestamp, data })
    const at = nowMs()
    for (const endpoint of endpoints)
      into.push({
        id: webhookIdOf(eventId, endpoint.id), endpoint_id: endpoint.id, library, event_type: type, event_id: eventId,
        body, attempts: 0, created_at: at, next_attempt_at: at, state: 'pending',
      })
  }

  /** Stores a batch's messages together and wakes the delivery worker. */
  async function enqueue(messages: StoredMessage[]): Promise<void> {
    if (messages.length === 0) return
    await store.enqueue(messages)
    wake(new Set(messages.map((m) => m.endpoint_id)))
  }

  async function libraryOfCode(code: string): Promise<string | null> {
    const known = codeLibraries.get(code)
    if (known) return known
    const library = await deps.libraryOfCode(code)
    if (library) {
      if (codeLibraries.size >= CODE_CACHE_MAX) codeLibraries.clear()
      codeLibraries.set(code, library)
    }
    return library
  }

  /** The library of a code when an endpoint of it takes scans; null when no endpoint would get its scans. */
  async function scanLibraryOf(code: string): Promise<string | null> {
    const library = await libraryOfCode(code)
    return library && (await subscribersOf(library, 'scan')).length > 0 ? library : null
  }

  return {
    /**
     * With an Idempotency-Key, at most once per key (docs/decisions.md §8): a retry gets the first
     * answer, secret included, and creates nothing.
     */
    async create(principal: Principal, body: unknown, idempotencyKey?: string): Promise<WebhookCreated> {
      const library = manager(principal)
      // Checked before the key is looked at: a refused request holds no key.
      const { url: sent, events } = orBadRequest(() => checkCreate(body))
      const normal = normalDestination(sent)
      if ('problem' in normal) throw new AppError('bad_request', normal.problem)
      const { url } = normal
      const at = Math.floor(nowMs() / 1000)
      // The destination (DNS) and the limit are checked once no earlier answer replays: a create
      // that succeeded is replayed with its 201 even once the library is at its limit (that
      // endpoint may be the tenth) or the name resolves elsewhere; a request they refuse claims
      // no key, so a corrected body may use it again (idempotent's `checks`).
      const checks = async () => {
        const problem = await destinationProblem(url, settings.allowPrivate)
        if (problem) throw new AppError('bad_request', problem)
        // The store decides the limit at the insert; checked here too, so the common refusal costs no write.
        if ((await store.listEndpoints(library)).length >= WEBHOOKS_PER_LIBRARY) throw limitReached()
      }
      const request = { scope: principal.key_id, key: idempotencyKey, route: CREATE_ROUTE, body, now: at, checks }
      return idempotent<WebhookCreated>(store, request, async (receiptFor) => {
        const endpoint: StoredEndpoint = {
          id: `wh_${nanoid()}`, url, events, status: 'enabled', created_at: at, disabled_at: null,
          library, secret: newSecret(), last_success_at: null,
        }
        const created = { ...publicOf(endpoint), secret: endpoint.secret }
        await store.insertEndpoint(endpoint, receiptFor?.(created), WEBHOOKS_PER_LIBRARY).catch((error) => {
          throw error instanceof EndpointLimitReached ? limitReached() : error
        })
        // Only a fresh create is announced: a replay created nothing.
        forget(library)
        await deps.endpointsChanged?.(library)
        return created
      }, deps.claims)
    },

    async list(principal: Principal): Promise<WebhookList> {
      return { webhooks: (await store.listEndpoints(manager(principal))).map(publicOf) }
    },

    async delete(principal: Principal, id: string): Promise<Deleted> {
      if (!(await store.deleteEndpoint(manager(principal), id))) await found(manager(principal), id)
      return { deleted: id }
    },

    /** The newest attempts first, at most WEBHOOK_ATTEMPTS_KEPT (what is kept). */
    async deliveries(principal: Principal, id: string): Promise<WebhookDeliveries> {
      const endpoint = await found(manager(principal), id)
      return { deliveries: await store.attempts(endpoint.id, WEBHOOK_ATTEMPTS_KEPT) }
    },

    /** Record events (RecordEvent); a malformed one is logged and dropped. Idempotent on the event id. */
    async ingestRecords(events: unknown[]): Promise<void> {
      const messages: StoredMessage[] = []
      for (const event of events) {
        if (!checkOf(RecordEvent).Check(event)) {
          log().warn({ event: JSON.stringify(event)?.slice(0, 200) }, 'malformed record event dropped')
          continue
        }
        await fanOut(messages, event.library, event.type, event.id, event.timestamp, event.data)
      }
      await enqueue(messages)
    },

    /** Another replica (or this one) created an endpoint of `library`: its subscribers are read again. */
    forgetSubscribers(library: string): void {
      forget(library)
    },

    /**
     * Whether a scan of any of these codes would reach an endpoint (scanLibraryOf). Over NATS a
     * scan batch names its codes, and one that no endpoint wants is acknowledged unread: every
     * batch, in a deployment without scan webhooks; reading them all cost this worker about twice
     * the CPU per scan (bench/ANALYSIS.md, fourteenth session).
     */
    async wantsScans(codes: readonly string[]): Promise<boolean> {
      for (const code of codes) if (await scanLibraryOf(code)) return true
      return false
    },

    /**
     * Scan events (ScanEvent as published); the scan's id is its event id. Every scan reaches
     * this worker, on the resolver's thread in one process, so a batch is grouped by code first:
     * each code's library and scan endpoints are looked up once, and the scans of a code no
     * endpoint wants cost a map entry each, not a check.
     */
    async ingestScans(events: unknown[]): Promise<void> {
      const byCode = new Map<string, unknown[]>()
      for (const event of events) {
        const code = (event as { code?: unknown } | null)?.code
        if (typeof code !== 'string') continue // no scan event: dropped, as the check would
        const scans = byCode.get(code)
        if (scans) scans.push(event)
        else byCode.set(code, [event])
      }
      const messages: StoredMessage[] = []
      for (const [code, scans] of byCode) {
        const library = await scanLibraryOf(code)
        if (!library) continue
        for (const event of scans)
          if (checkOf(ScanEvent).Check(event)) await fanOut(messages, library, 'scan', event.scan_id, new Date(event.scanned_at).toISOString(), event)
      }
      await enqueue(messages)
    },
  }
}
