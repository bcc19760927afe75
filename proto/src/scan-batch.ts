// No imports: a resolver thread loads this file (see ./scans.ts).

/**
 * Scans that travel together as one JSON text: a resolver thread hands its scans to the process's
 * main thread so, and in one process they cross the in-process bus so (SCAN_BATCH_EVENT) to the
 * consumers inside it, which pass the text on unread (the ingestion Worker) or read it only when
 * they want one of its codes (the webhooks worker). Parsing and publishing each scan on the main
 * thread was most of its work under the resolver load (bench/ANALYSIS.md, eighteenth session).
 */
export interface ScanBatch {
  /** A JSON array of scan events. */
  events: string
  /** The distinct codes of those scans, space-separated. */
  codes: string
  /** How many scans `events` holds. */
  count: number
}

/** Scan events as one ScanBatch: their JSON text, their distinct codes, their count. */
export function scanBatchOf(events: readonly { code: string }[]): ScanBatch {
  const codes = new Set<string>()
  for (const event of events) codes.add(event.code)
  return { events: JSON.stringify(events), codes: [...codes].join(' '), count: events.length }
}

/**
 * Subject of ScanBatch events on the in-process bus: the one-process twin of the SCAN_BATCHES
 * stream, on a subject of its own (over NATS that stream would take `scan-batches` events in and
 * store these objects where arrays belong). Its consumers subscribe in queue groups;
 * `scans.<code>` still carries every scan to whoever subscribes there (createBusScanPublisher).
 */
export const SCAN_BATCH_EVENT = 'local.scan-batches'

/** The scan events of a batch's JSON text; text that is not a JSON array is [null], which validation drops. */
export function scansOfText(text: string): unknown[] {
  try {
    const events: unknown = JSON.parse(text)
    return Array.isArray(events) ? events : [null]
  } catch {
    return [null]
  }
}

/** The scan events of several batches' texts, in order (scansOfText of each). */
export function scansOfTexts(texts: readonly string[]): unknown[] {
  if (texts.length === 1) return scansOfText(texts[0]!)
  const events: unknown[] = []
  for (const text of texts) for (const event of scansOfText(text)) events.push(event)
  return events
}
