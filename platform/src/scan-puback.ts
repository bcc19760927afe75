import type { Msg } from 'nats'
import { SCAN_STREAM } from './scan-stream-config'

/** SCANS stored the scan (a PubAck, also for a duplicate). */
export const STORED = 0
/** SCANS refused it (an error PubAck), or no stream takes its subject ("no responders"). */
export const REFUSED = 1
/** Not JetStream's answer: a core subscriber of scans.> answering the message with anything. */
export const FOREIGN = 2
export type ScansAnswer = typeof STORED | typeof REFUSED | typeof FOREIGN

const encoder = new TextEncoder()
/** How a PubAck of SCANS begins: the server writes `stream` first, then `seq` (`{"stream":"SCANS", "seq":7}`; `"duplicate": true` after for a repeat). */
const PUBACK = encoder.encode(`{"stream":${JSON.stringify(SCAN_STREAM)},`)
const SEQ = encoder.encode('"seq":')
/** How an error PubAck begins (`{"error":{"code":503,...,"description":"maximum messages exceeded"},"stream":"SCANS","seq":0}`). */
const ERROR = encoder.encode('{"error":')
const SPACE = 0x20
const isDigit = (byte: number | undefined) => byte !== undefined && byte >= 0x30 && byte <= 0x39

function startsAt(data: Uint8Array, pattern: Uint8Array, offset: number): boolean {
  if (data.length < offset + pattern.length) return false
  for (let i = 0; i < pattern.length; i++) if (data[offset + i] !== pattern[i]) return false
  return true
}

/** `"seq":` and a digit from `offset` on, spaces allowed before each. */
function seqAt(data: Uint8Array, offset: number): boolean {
  while (data[offset] === SPACE) offset++
  if (!startsAt(data, SEQ, offset)) return false
  offset += SEQ.length
  while (data[offset] === SPACE) offset++
  return isDigit(data[offset])
}

/** An error PubAck names its stream; an `{"error":...}` that names none, or another, is some subscriber's. Decoded: only refusals get here. */
function refusedBySCANS(msg: Msg): boolean {
  try {
    const answer = JSON.parse(msg.string()) as { error?: unknown; stream?: unknown }
    return typeof answer.error === 'object' && answer.error !== null && answer.stream === SCAN_STREAM
  } catch {
    return false
  }
}

/**
 * What an answer to a scan published to SCANS with a reply subject says. JetStream's answers are
 * told from any other by their shape: its PubAck is `{"stream":"SCANS", "seq":N...}`, its refusals
 * an error naming SCANS or an empty 503 status ("no responders", from the server itself). Every
 * other answer is FOREIGN: a core subscriber of `scans.>` may answer a message it reads
 * (msg.respond), and taken as a PubAck (the relay had checked two bytes, which `{"status":"ok"}`
 * passed), it had acknowledged a batch whose scans SCANS never stored; taken as a refusal, it made
 * every round fail. A PubAck is read from its first bytes, not decoded: one arrives per scan.
 */
export function scansAnswerOf(msg: Msg): ScansAnswer {
  const { data } = msg
  if (startsAt(data, PUBACK, 0)) return seqAt(data, PUBACK.length) ? STORED : FOREIGN
  if (data.length === 0) return msg.headers?.code === 503 ? REFUSED : FOREIGN
  return startsAt(data, ERROR, 0) && refusedBySCANS(msg) ? REFUSED : FOREIGN
}
