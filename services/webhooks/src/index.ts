// Signed webhooks per library (docs/decisions.md "Webhooks"): endpoints, the outbox, the delivery worker.
export { startWebhooks, openWebhookStore, webhookSettingsOf, type WebhookIntake } from './start'
export { createWebhookService, type WebhookService, type WebhookSettings, MANAGE_FORBIDDEN } from './service'
export { createDeliveryWorker, retryDelay } from './worker'
export { destinationProblem, isPrivateAddress } from './destination'
export { sign, newSecret } from './signature'
export type { WebhookStore, StoredEndpoint, StoredMessage, StoredAttempt } from './ports'
