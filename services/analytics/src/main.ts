import { runServiceProcess } from '@lr/platform/service-process'
import { createJetStreamScanSource } from '@lr/platform/scan-stream'
import { startScanRelayInWorker } from '@lr/platform/scan-relay-in-worker'
import { startAnalytics } from './start'

// Process entry of the analytics service when TRANSPORT=nats: config, NATS bus (queue
// `analytics`), store, the durable consumer `analytics` of the SCAN_BATCHES stream, and the relay
// that copies each batch's scans to the public SCANS stream one per message (its own durable
// consumer `scans-relay`, in a Worker of its own; SCAN_RELAY=0 leaves it out); on SIGTERM/SIGINT
// stop both (what is not done goes back to the stream), unsubscribe, close bus and store, exit 0.
// Scan batches are applied in this thread.
await runServiceProcess('analytics', async (ctx, { connection, fail }) => {
  if (ctx.config.SCAN_RELAY === 0) return startAnalytics(ctx, { source: createJetStreamScanSource(connection) })
  // The relay gives way to ingestion while ingestion is behind (ScanRelay.giveWay).
  let relay: Awaited<ReturnType<typeof startScanRelayInWorker>> | undefined
  let behind = false
  const onBacklog = (now: boolean) => {
    behind = now
    relay?.giveWay(now)
  }
  const analytics = await startAnalytics(ctx, { source: createJetStreamScanSource(connection, { onBacklog }) })
  relay = await startScanRelayInWorker(ctx.config, fail).catch(async (error) => {
    await analytics.stop()
    throw error
  })
  if (behind) relay.giveWay(true)
  return {
    ready: analytics.ready,
    async stop() {
      await relay.stop()
      await analytics.stop()
    },
  }
}, { jetstream: 'required' })
