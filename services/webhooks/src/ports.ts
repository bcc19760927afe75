import type { Receipt, ReceiptStore, WebhookAttempt, WebhookEndpoint, WebhookEventType } from '@lr/proto'

/** An endpoint as stored: with its library, its secret and when a delivery to it last succeeded. */
export interface StoredEndpoint extends WebhookEndpoint {
  library: string
  secret: string
  /** Epoch milliseconds of the last 2xx; null before the first. */
  last_success_at: number | null
}

/** One event for one endpoint (the outbox): what is sent, and where its retries stand. */
export interface StoredMessage {
  /** The `webhook-id` header: stable per event and endpoint. */
  id: string
  endpoint_id: string
  library: string
  event_type: WebhookEventType
  event_id: string
  /** The exact JSON body sent (and signed) on every attempt. */
  body: string
  /** Attempts claimed so far. */
  attempts: number
  /** Epoch milliseconds when it was stored: the retry window runs from here. */
  created_at: number
  /** Epoch milliseconds when it is due (or its claim runs out); null once settled. */
  next_attempt_at: number | null
  state: 'pending' | 'delivered' | 'failed'
}

/** insertEndpoint's answer when the library holds its `limit` of endpoints already. */
export class EndpointLimitReached extends Error {
  constructor() {
    super('the library holds its limit of webhook endpoints')
    this.name = 'EndpointLimitReached'
  }
}

/** One attempt as listed by GET /v1/webhooks/{id}/deliveries. */
export type StoredAttempt = WebhookAttempt & { endpoint_id: string }

/**
 * Persistence of the webhooks worker: endpoints, the outbox of messages and the attempts log.
 * Adapters: createSqliteWebhookStore (bun:sqlite), createMongoWebhookStore (mongoose's driver).
 */
export interface WebhookStore extends ReceiptStore {
  /**
   * Stores a new endpoint; with `receipt` (an Idempotency-Key), that receipt with it, all or
   * nothing. Rejects with ReceiptTaken, storing no endpoint, when a live receipt holds its scope
   * and key. `findReceipt` answers such receipts; on a Mongo without transactions it first
   * writes the endpoint a dead writer's receipt names, when it is missing. With `limit`, rejects
   * with EndpointLimitReached, storing nothing, when the library would hold more endpoints than
   * that: decided by the store, so creates at once cannot pass it together.
   */
  insertEndpoint(endpoint: StoredEndpoint, receipt?: Receipt, limit?: number): Promise<void>
  /** The library's endpoints, oldest first. */
  listEndpoints(library: string): Promise<StoredEndpoint[]>
  /** An endpoint of the library; null when it is not there (another library's included). */
  getEndpoint(library: string, id: string): Promise<StoredEndpoint | null>
  /** Deletes the endpoint with its messages and attempts; false when it is not in the library. */
  deleteEndpoint(library: string, id: string): Promise<boolean>
  /**
   * Deletes the messages and attempts of an endpoint that is not there any more: stored after its
   * delete by an intake that still remembered it (SUBSCRIBERS_TTL_MS), or left by a delete cut
   * short. The worker calls it when a message's endpoint is gone.
   */
  dropRemains(endpointId: string): Promise<void>
  /** The library's enabled endpoints subscribed to `type`. */
  subscribers(library: string, type: WebhookEventType): Promise<StoredEndpoint[]>
  /** Disables the endpoint and gives up its pending messages. */
  disableEndpoint(id: string, at: number): Promise<void>

  /** Stores new messages; one whose id is stored already is left as it is (a redelivered event). */
  enqueue(messages: StoredMessage[]): Promise<void>
  /**
   * Up to `limit` pending messages due at `now` (epoch ms), the earliest due first, none of an
   * endpoint in `skip` (those with PER_ENDPOINT attempts in flight, src/slots.ts). The skipped
   * endpoints' due messages are passed over in an index without reading them, but one by one: a
   * long backlog of theirs costs in proportion (the worker spaces such looks out).
   */
  due(now: number, limit: number, skip?: readonly string[]): Promise<StoredMessage[]>
  /** Up to `limit` pending messages of one endpoint due at `now`, the earliest due first; read by endpoint, however many others are due. */
  dueOf(endpointId: string, now: number, limit: number): Promise<StoredMessage[]>
  /**
   * Takes a due message for one attempt: when its next_attempt_at is still `expected`, sets it
   * to `until` (a crashed worker's claim runs out then) and counts the attempt; null when another
   * worker took it or it was settled or deleted meanwhile.
   */
  claim(id: string, expected: number, until: number): Promise<StoredMessage | null>
  /**
   * Records an attempt and where the message stands after it: delivered, failed (given up) or
   * pending again at `next_attempt_at`. A delivery also sets the endpoint's last_success_at.
   * Keeps only the `keep` newest attempts of the endpoint. Records nothing when the message is
   * not stored any more: its endpoint was deleted during the attempt (a claimed message is
   * pending, so never purged), and its attempts would outlive it, never read nor trimmed.
   */
  settle(message: StoredMessage, attempt: StoredAttempt, keep: number): Promise<void>
  /** Deletes settled (delivered or failed) messages stored before `before` (epoch ms); answers how many. */
  purge(before: number): Promise<number>
  /** The endpoint's attempts, newest first. */
  attempts(endpointId: string, limit: number): Promise<WebhookAttempt[]>
  ping(): Promise<boolean>
  /**
   * Epoch milliseconds every replica sharing this store reads alike, where the store has such a
   * clock: MongoDB's server (platform/src/mongo-clock.ts). Due times and claims are compared across
   * replicas, so a worker whose own clock ran ahead would take a message another worker is still
   * sending. Without it (SQLite: one process), this process's clock (storeClockOf).
   */
  now?(): number
}

