import { type Static, Type as T } from '@sinclair/typebox'
import { Principal } from './principal'

/** Subjects of services/webhooks (signed webhooks per library); queue group `webhooks`. */
export const WEBHOOK_SUBJECTS = {
  create: 'webhooks.v1.create',
  list: 'webhooks.v1.list',
  delete: 'webhooks.v1.delete',
  deliveries: 'webhooks.v1.deliveries',
  /**
   * TRANSPORT=memory only: a record event (RecordEvent) handed to the worker, which answers once
   * its deliveries are stored. With TRANSPORT=nats record events go to the RECORD_EVENTS stream.
   */
  ingest: 'webhooks.v1.ingest',
} as const
export const WEBHOOKS_QUEUE = 'webhooks'
/**
 * Event {library}: an endpoint of the library was created. Every webhooks replica hears it (no
 * queue group) and reads the library's scan subscribers again instead of what it remembered.
 */
export const WEBHOOKS_ENDPOINTS_CHANGED = 'webhooks.v1.endpoints-changed'

/** What an endpoint can subscribe to (docs/decisions.md, "Webhooks"). */
export const WEBHOOK_EVENT_TYPES = ['record.created', 'record.updated', 'record.deleted', 'scan'] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]
export type RecordEventType = Exclude<WebhookEventType, 'scan'>

/** Endpoints one library may have at once. */
export const WEBHOOKS_PER_LIBRARY = 10
/** Delivery attempts kept (and listed) per endpoint: the newest. */
export const WEBHOOK_ATTEMPTS_KEPT = 100

const EventType = T.Union(WEBHOOK_EVENT_TYPES.map((type) => T.Literal(type)))

export const WebhookCreateBody = T.Object({
  url: T.String({ minLength: 1, maxLength: 2048, description: 'http or https URL the events are POSTed to, without credentials, whitespace or control characters; stored and answered in its normal form (`new URL(url).href`). Private, loopback and link-local destinations are refused unless WEBHOOKS_ALLOW_PRIVATE=1.', examples: ['https://example.com/hooks/qr'] }),
  events: T.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true, description: 'The events sent to this endpoint.' }),
}, { additionalProperties: false })
export type WebhookCreateBody = Static<typeof WebhookCreateBody>

export const WebhookEndpoint = T.Object({
  id: T.String({ description: 'wh_ followed by 21 characters' }),
  url: T.String(),
  events: T.Array(EventType),
  status: T.Union([T.Literal('enabled'), T.Literal('disabled')], { description: '`disabled` after every delivery failed for the retry window (24 h); a disabled endpoint gets nothing new. Delete it and create it again to resume.' }),
  created_at: T.Integer({ description: 'epoch seconds' }),
  disabled_at: T.Union([T.Integer(), T.Null()], { description: 'epoch seconds, when it was disabled' }),
})
export type WebhookEndpoint = Static<typeof WebhookEndpoint>

/** The create answer: the only time the secret is shown. */
export const WebhookCreated = T.Composite([WebhookEndpoint, T.Object({
  secret: T.String({ description: 'Standard Webhooks signing secret, `whsec_` + base64 of 24 random bytes; shown only in this answer.' }),
})])
export type WebhookCreated = Static<typeof WebhookCreated>

export const WebhookList = T.Object({ webhooks: T.Array(WebhookEndpoint) })
export type WebhookList = Static<typeof WebhookList>

export const WebhookAttempt = T.Object({
  webhook_id: T.String({ description: 'The `webhook-id` header: the same for every attempt of one event to one endpoint.' }),
  event_type: EventType,
  event_id: T.String(),
  attempt: T.Integer({ minimum: 1 }),
  status: T.Union([T.Literal('delivered'), T.Literal('failed')], { description: '`delivered` for a 2xx answer' }),
  http_status: T.Union([T.Integer(), T.Null()], { description: 'The answer\'s status; null when none came (see `error`).' }),
  error: T.Union([T.String(), T.Null()], { description: 'Why no 2xx came: a timeout, a refused destination, a status.' }),
  attempted_at: T.Integer({ description: 'epoch milliseconds' }),
  duration_ms: T.Integer({ minimum: 0 }),
  next_attempt_at: T.Union([T.Integer(), T.Null()], { description: 'epoch milliseconds of the next retry; null when delivered or given up' }),
})
export type WebhookAttempt = Static<typeof WebhookAttempt>
export const WebhookDeliveries = T.Object({ deliveries: T.Array(WebhookAttempt) })
export type WebhookDeliveries = Static<typeof WebhookDeliveries>

/** A create; `idempotency_key` is the client's Idempotency-Key header, when sent. */
export const WebhookCreateRequest = T.Object({ principal: Principal, body: T.Unknown(), idempotency_key: T.Optional(T.String()) })
export const WebhookIdRequest = T.Object({ principal: Principal, id: T.String() })

/**
 * Event: a library record was created, updated or deleted (after the write, before the answer).
 * `data` is the record as the API answers it plus its `kind` (`static`, `dynamic`); for a delete,
 * its tombstone plus its kind. Published by services/records and services/dynamic.
 */
export const RecordEvent = T.Object({
  /** Unique id of the event (evt_ + UUIDv7): part of the webhook-id, and the stream's Nats-Msg-Id. */
  id: T.String({ minLength: 1 }),
  type: T.Union([T.Literal('record.created'), T.Literal('record.updated'), T.Literal('record.deleted')]),
  library: T.String({ minLength: 1 }),
  /** ISO 8601 time of the change. */
  timestamp: T.String(),
  data: T.Record(T.String(), T.Unknown()),
})
export type RecordEvent = Static<typeof RecordEvent>
/** Subject of a record event on the RECORD_EVENTS stream (TRANSPORT=nats). */
export const recordEventSubject = (type: RecordEventType) => `record-events.${type}`

/** Hands a record event on; resolves once it is durable (stream or delivery rows). */
export type RecordEventSink = (event: RecordEvent) => Promise<void>
