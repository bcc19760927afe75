import { log } from '@lr/platform/log'
import { scansIngested } from '@lr/platform/metrics'
import type { IngestResult } from './ingest'

/** What the log says of malformed events: `dropped` of them were not applied. */
export const MALFORMED_DROPPED = 'dropped malformed scan events'

/**
 * A batch's outcome in lr_scans_ingested_total, and its malformed events in an `error` line, on
 * the thread that serves /metrics: whether the batch was applied here (TRANSPORT=nats) or by the
 * ingestion Worker (`bun start`), which loads no metrics. Without it nothing on the analytics side
 * said how many scans it took in and counted, to set against the resolver's published scans.
 */
export function reportIngest({ received, applied, malformed, bots }: IngestResult): void {
  if (applied > 0) scansIngested.inc({ outcome: 'counted' }, applied)
  const repeated = received - applied - malformed - bots
  if (repeated > 0) scansIngested.inc({ outcome: 'repeated' }, repeated)
  if (bots > 0) scansIngested.inc({ outcome: 'bot' }, bots)
  if (malformed > 0) {
    scansIngested.inc({ outcome: 'malformed' }, malformed)
    log().error({ dropped: malformed }, MALFORMED_DROPPED)
  }
}
