import type { Connection } from 'mongoose'
import { type Config, DYNAMIC_SUBJECTS, type ScanSource, WEBHOOKS_ENDPOINTS_CHANGED } from '@lr/proto'
import { openKeyClaims } from '@lr/platform/key-claims'
import type { RunningService, ServiceContext } from '@lr/platform/lifecycle'
import { type OpenedStore, openServiceStore } from '@lr/platform/store'
import { createSqliteWebhookStore } from './adapters/webhook-store.sqlite'
import { serveRecordIntake, serveWebhooks } from './handlers'
import type { WebhookStore } from './ports'
import { createWebhookService, type WebhookSettings } from './service'
import { createDeliveryWorker } from './worker'

/** Opens the store config.STORE names (`${DATA_DIR}/webhooks.sqlite`, or Mongo); see openServiceStore. */
export const openWebhookStore = (config: Config, mongo?: Connection): Promise<OpenedStore<WebhookStore>> =>
  openServiceStore(config, mongo, {
    name: 'webhooks',
    sqlite: createSqliteWebhookStore,
    mongo: async () => (await import('./adapters/webhook-store.mongo')).createMongoWebhookStore,
  })

export const webhookSettingsOf = (config: Config): WebhookSettings => ({
  allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE === 1,
  retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
  retryMaxMs: config.WEBHOOK_RETRY_MAX_MS,
  retryWindowMs: config.WEBHOOK_RETRY_WINDOW_S * 1000,
  timeoutMs: config.WEBHOOK_TIMEOUT_MS,
})

/** Where the worker's events come from; the entry point picks (JetStream consumers, or the in-process bus). */
export interface WebhookIntake {
  /** Record events: `start` hands each batch to `apply` and acknowledges it after; none means the bus (TRANSPORT=memory). */
  records?: { start(apply: (events: unknown[]) => Promise<void>): Promise<void>; stop(): Promise<void> }
  scans: ScanSource
}

/**
 * Starts the webhooks service: its store, the management subjects, the intake of record and scan
 * events, and the delivery loop, with the Idempotency-Key register the services that create
 * share (openKeyClaims). `stop` stops the intake first, then the loop (attempts in flight
 * finish), then closes the register and the store.
 */
export async function startWebhooks(ctx: ServiceContext, intake: WebhookIntake): Promise<RunningService> {
  const { store, close } = await openWebhookStore(ctx.config, ctx.mongo)
  const settings = webhookSettingsOf(ctx.config)
  const worker = createDeliveryWorker({ store, settings })
  const keys = openKeyClaims(ctx.config)
  const service = createWebhookService({
    store,
    settings,
    libraryOfCode: (code) => ctx.bus.request<string | null>(DYNAMIC_SUBJECTS.library, { code }),
    wake: worker.wake,
    endpointsChanged: (library) => ctx.bus.publish(WEBHOOKS_ENDPOINTS_CHANGED, { library }),
    claims: keys.claims,
  })
  const unheard = ctx.bus.subscribe(WEBHOOKS_ENDPOINTS_CHANGED, (event) => service.forgetSubscribers(String((event as { library?: unknown }).library)))
  worker.start()
  const stopIntake = intake.records ? undefined : serveRecordIntake(ctx.bus, service)
  await intake.records?.start((events) => service.ingestRecords(events))
  await intake.scans.start((events) => service.ingestScans(events), (codes) => service.wantsScans(codes))
  const unsubscribe = serveWebhooks(ctx.bus, service)
  return {
    ready: () => store.ping(),
    async stop() {
      await intake.scans.stop()
      await intake.records?.stop()
      stopIntake?.()
      unsubscribe()
      unheard()
      await worker.stop()
      keys.close()
      await close()
    },
  }
}
