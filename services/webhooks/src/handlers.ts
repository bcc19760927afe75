import { type Bus, decode, WEBHOOK_SUBJECTS as S, WebhookCreateRequest, WebhookIdRequest, WEBHOOKS_QUEUE, WithPrincipal } from '@lr/proto'
import type { WebhookService } from './service'

/** Serves the management subjects in queue group `webhooks`; returns one unsubscribe for all. */
export function serveWebhooks(bus: Bus, service: WebhookService): () => void {
  const opts = { queue: WEBHOOKS_QUEUE }
  const subscriptions = [
    bus.serve(S.create, async (p) => {
      const { principal, body, idempotency_key } = decode(WebhookCreateRequest, p)
      return service.create(principal, body, idempotency_key)
    }, opts),
    bus.serve(S.list, async (p) => service.list(decode(WithPrincipal, p).principal), opts),
    bus.serve(S.delete, async (p) => {
      const { principal, id } = decode(WebhookIdRequest, p)
      return service.delete(principal, id)
    }, opts),
    bus.serve(S.deliveries, async (p) => {
      const { principal, id } = decode(WebhookIdRequest, p)
      return service.deliveries(principal, id)
    }, opts),
  ]
  return () => subscriptions.forEach((unsubscribe) => unsubscribe())
}

/**
 * TRANSPORT=memory: record events as requests, one event or an array of them (busRecordEvents);
 * the answer comes once their messages are stored.
 */
export const serveRecordIntake = (bus: Bus, service: WebhookService) =>
  bus.serve(S.ingest, async (events) => {
    await service.ingestRecords(Array.isArray(events) ? events : [events])
    return null
  }, { queue: WEBHOOKS_QUEUE })
