import { runServiceProcess } from '@lr/platform/service-process'
import { createJetStreamScanSource } from '@lr/platform/scan-stream'
import { startAnalytics } from './start'

// Process entry of the analytics service when TRANSPORT=nats: config, NATS bus (queue
// `analytics`), store, the durable consumer `analytics` of the SCANS stream; on SIGTERM/SIGINT
// stop consuming (unapplied scans go back to the stream), unsubscribe, close bus and store, exit 0.
// Scan batches are applied in this thread: the process does nothing else.
await runServiceProcess('analytics', (ctx, { connection }) => startAnalytics(ctx, { source: createJetStreamScanSource(connection) }))
