import { runServiceProcess } from '@lr/platform/service-process'
import { startRecords } from './start'

// Process entry of the records service when TRANSPORT=nats: config, NATS bus (queue `records`),
// store, and on SIGTERM/SIGINT unsubscribe, close the bus and the store, exit 0.
await runServiceProcess('records', (ctx) => startRecords(ctx))
