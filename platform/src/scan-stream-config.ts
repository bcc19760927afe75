import type { JetStreamManager, JsMsg } from 'nats'
import { scansOfText } from '@lr/proto/scan-batch'
import { durableStream, ensureStream } from './jetstream-streams'

/**
 * The durable scan pipeline with TRANSPORT=nats (docs/decisions.md §5), two streams:
 * - SCAN_BATCHES, the ingestion path: the resolver publishes what it counted while its previous
 *   batches awaited their PubAck as one message (a JSON array of scan events, `Nats-Msg-Id` =
 *   the batch id, so a batch re-sent after a lost PubAck is stored once); analytics applies
 *   them, the webhooks worker reads them. One acknowledged publish per scan held the broker to
 *   ~22k scans/s on 2 cores (bench/ANALYSIS.md, "Fifth session").
 * - SCANS, the public one: every scan a message of its own on scans.<code>, deduplicated by
 *   scan_id (`Nats-Msg-Id`), for outside consumers (README "Scan events"). The relay in the
 *   analytics process (scan-relay.ts) fills it from SCAN_BATCHES, unless SCAN_RELAY=0.
 */
export const SCAN_BATCH_STREAM = 'SCAN_BATCHES'
export const SCAN_BATCH_SUBJECT = 'scan-batches'
export const SCAN_STREAM = 'SCANS'
export const SCAN_STREAM_SUBJECTS = ['scans.>']
export const scanStreamConfig = () => durableStream(SCAN_STREAM, SCAN_STREAM_SUBJECTS)
export const scanBatchStreamConfig = () => durableStream(SCAN_BATCH_STREAM, [SCAN_BATCH_SUBJECT])

export const ensureScanStream = (jsm: JetStreamManager) => ensureStream(jsm, scanStreamConfig())
export const ensureScanBatchStream = (jsm: JetStreamManager) => ensureStream(jsm, scanBatchStreamConfig())

/**
 * Header of a SCAN_BATCHES message naming the distinct codes of its scans, space-separated, so a
 * reader that wants only some codes' scans (the webhooks worker) can pass a batch by unread.
 * Absent when a batch holds more than SCAN_CODES_HEADER_MAX codes (and on batches of an older
 * publisher): the body is read then.
 */
export const SCAN_CODES_HEADER = 'Lr-Scan-Codes'
export const SCAN_CODES_HEADER_MAX = 64

/** The batch's distinct codes as SCAN_CODES_HEADER's value, or undefined beyond SCAN_CODES_HEADER_MAX. */
export function codesHeader(events: readonly { code: string }[]): string | undefined {
  const codes = new Set<string>()
  for (const event of events) {
    codes.add(event.code)
    if (codes.size > SCAN_CODES_HEADER_MAX) return undefined
  }
  return [...codes].join(' ')
}

/** The codes a SCAN_BATCHES message names in its header, or undefined when it names none. */
export function scanCodesOf(msg: Pick<JsMsg, 'headers'>): string[] | undefined {
  const named = msg.headers?.get(SCAN_CODES_HEADER)
  return named ? named.split(' ') : undefined
}

/**
 * The scan events of one SCAN_BATCHES message (a JSON array); a malformed message is [null], so
 * the consumer's validation drops it and it is acknowledged with the rest.
 */
export const scansOfBatch = (msg: JsMsg): unknown[] => scansOfText(msg.string())
