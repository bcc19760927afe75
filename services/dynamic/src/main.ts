import { runServiceProcess } from '@lr/platform/service-process'
import { startDynamic } from './start'

// Process entry of the dynamic service when TRANSPORT=nats: config, NATS bus (queue `dynamic`),
// store, and on SIGTERM/SIGINT unsubscribe, close the bus and the store, exit 0.
await runServiceProcess('dynamic', (ctx) => startDynamic(ctx))
