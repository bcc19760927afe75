import { Elysia } from 'elysia'
import { type Bus, Deleted, WEBHOOK_SUBJECTS as S, WebhookCreateBody, WebhookCreated, WebhookDeliveries, WebhookList } from '@lr/proto'
import { createRequest, noQuery, principalOf } from '../context'
import { doc } from './openapi'

const tag = 'Webhooks'
const path = { id: 'The webhook id (`wh_...`) as its create answered.' }
const who = 'Team admins and the owner of a personal library only (writers get 403).'
const endpoint = { id: 'wh_V1StGXR8_Z5jdHi6B-myT', url: 'https://example.com/hooks/qr', events: ['record.created', 'scan'], status: 'enabled', created_at: 1767225600, disabled_at: null }

/** The OpenAPI entry of each route (openapi.ts). */
const docs = {
  create: doc({
    operationId: 'createWebhook', tag, summary: 'Create a webhook endpoint',
    description: `${who} Answers the signing secret (a retry with the same Idempotency-Key answers the same endpoint and secret again, and creates nothing). Each event is POSTed as \`{"type", "timestamp", "data"}\` with the Standard Webhooks headers \`webhook-id\`, \`webhook-timestamp\` and \`webhook-signature\`; delivered at least once (deduplicate by \`webhook-id\`).`,
    body: WebhookCreateBody, bodyExamples: { created: { url: endpoint.url, events: endpoint.events } },
    status: 201, ok: WebhookCreated, okExamples: { created: { ...endpoint, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } }, answer: 'The endpoint, with its secret (shown only here).', idempotent: true,
  }),
  list: doc({ operationId: 'listWebhooks', tag, summary: "List the library's webhook endpoints", description: `${who} Secrets are never shown again.`, ok: WebhookList, okExamples: { list: { webhooks: [endpoint] } }, answer: 'Every endpoint, oldest first.' }),
  delete: doc({ operationId: 'deleteWebhook', tag, summary: 'Delete a webhook endpoint', description: `${who} Pending deliveries are dropped.`, path, notFound: true, ok: Deleted, okExamples: { deleted: { deleted: endpoint.id } }, answer: 'The id deleted.' }),
  deliveries: doc({
    operationId: 'listWebhookDeliveries', tag, summary: 'Recent delivery attempts of an endpoint', path, notFound: true,
    description: `${who} The newest 100 attempts, newest first.`, ok: WebhookDeliveries, answer: 'The attempts.',
    okExamples: { deliveries: { deliveries: [{ webhook_id: 'msg_2b7Yx0E3fV9bQk1sPz8T4wA6cR', event_type: 'scan', event_id: '0193b0a2-7c1e-7d3a-9f00-1a2b3c4d5e6f', attempt: 1, status: 'delivered', http_status: 204, error: null, attempted_at: 1767225600123, duration_ms: 84, next_attempt_at: null }] } },
  }),
}

/** /v1/webhooks: each route forwards to services/webhooks and returns its answer. */
export const webhookRoutes = (bus: Bus) =>
  new Elysia({ name: 'webhook-routes', prefix: '/v1/webhooks' })
    .get('', ({ request }) => (noQuery(request), bus.request(S.list, { principal: principalOf(request) })), { detail: docs.list })
    .post('', async ({ request, body, set }) => {
      noQuery(request)
      const created = await bus.request<WebhookCreated>(S.create, createRequest(request, body))
      set.status = 201
      return created
    }, { detail: docs.create })
    .delete('/:id', ({ request, params }) => (noQuery(request), bus.request(S.delete, { principal: principalOf(request), id: params.id })), { detail: docs.delete })
    .get('/:id/deliveries', ({ request, params }) => (noQuery(request), bus.request(S.deliveries, { principal: principalOf(request), id: params.id })), { detail: docs.deliveries })
