import { runServiceProcess } from '@lr/platform/service-process'
import { processRecordEvents } from '@lr/platform/record-stream'
import { startDynamic } from './start'

// Process entry of the dynamic service when TRANSPORT=nats: config, NATS bus (queue `dynamic`),
// store, and on SIGTERM/SIGINT unsubscribe, close the bus and the store, exit 0.
// Record events go to the RECORD_EVENTS stream, read by the webhooks worker; held on disk while JetStream is away.
await runServiceProcess('dynamic', (ctx, nats) => startDynamic(ctx, { events: processRecordEvents(nats.connection, ctx.config, 'dynamic') }), { jetstream: 'held' })
