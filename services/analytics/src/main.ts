import { runServiceProcess } from '@lr/platform/service-process'
import { startAnalytics } from './index'

// Process entry of the analytics service when TRANSPORT=nats: config, NATS bus (queue
// `analytics`), store, the durable consumer `analytics` of the SCANS stream; on SIGTERM/SIGINT
// stop consuming (unapplied scans go back to the stream), unsubscribe, close bus and store, exit 0.
await runServiceProcess('analytics', startAnalytics)
