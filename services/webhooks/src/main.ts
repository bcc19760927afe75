import { runServiceProcess } from '@lr/platform/service-process'
import { createDurableConsumer, ensureRecordEventStream, RECORD_EVENT_STREAM } from '@lr/platform/record-stream'
import { ensureScanBatchStream, SCAN_BATCH_STREAM, scanCodesOf, scansOfBatch } from '@lr/platform/scan-stream'
import { startWebhooks } from './start'

// Process entry of the webhooks worker when TRANSPORT=nats: config, NATS bus (queue `webhooks`),
// store, durable consumers `webhooks` of RECORD_EVENTS and SCAN_BATCHES (acked once the messages
// are stored; a batch of scans at a time, not SCANS's one per scan, and a batch whose codes no
// endpoint wants acknowledged unread), the delivery loop; on SIGTERM/SIGINT intake stops,
// attempts in flight finish, exit 0.
await runServiceProcess('webhooks', (ctx, { connection }) =>
  startWebhooks(ctx, {
    records: createDurableConsumer(connection, { stream: RECORD_EVENT_STREAM, durable: 'webhooks', ensureStream: ensureRecordEventStream }),
    scans: createDurableConsumer(connection, { stream: SCAN_BATCH_STREAM, durable: 'webhooks', ensureStream: ensureScanBatchStream, eventsOf: scansOfBatch, codesOf: scanCodesOf }),
  }), { jetstream: 'required' })
