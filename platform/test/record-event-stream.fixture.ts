import { DiscardPolicy, type JetStreamManager } from 'nats'
import type { RecordEvent } from '@lr/proto'
import { durableStream } from '@lr/platform/jetstream-streams'
import { RECORD_EVENT_STREAM, recordEventsOf } from '@lr/platform/record-stream'

/** Event n, about 1 KB of JSON: a few dozen fill a 64 KiB file. */
export const paddedEvent = (n: number): RecordEvent => ({ id: `evt_${String(n).padStart(6, '0')}`, type: 'record.created', library: 'acct_1', timestamp: new Date(1_736_510_400_000 + n).toISOString(), data: { n, note: 'x'.repeat(1000) } })
export const eventIds = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => paddedEvent(from + i).id)

/**
 * RECORD_EVENTS made afresh with room for no message (max_bytes 1, new ones refused): every
 * publish fails at once with JetStream's own error, as while it is away, so the sink holds its
 * events; `takeRecordEvents` lifts the bound. No broker restart, so no reconnect to wait for.
 */
export async function refuseRecordEvents(jsm: JetStreamManager): Promise<void> {
  await jsm.streams.delete(RECORD_EVENT_STREAM).catch(() => false)
  await jsm.streams.add({ ...durableStream(RECORD_EVENT_STREAM, ['record-events.>']), max_bytes: 1, discard: DiscardPolicy.New })
}

export async function takeRecordEvents(jsm: JetStreamManager): Promise<void> {
  const { config } = await jsm.streams.info(RECORD_EVENT_STREAM)
  await jsm.streams.update(RECORD_EVENT_STREAM, { ...config, max_bytes: -1 })
}

/** The ids of the events the stream holds, in order. */
export async function storedEventIds(jsm: JetStreamManager): Promise<string[]> {
  const { first_seq, last_seq, messages } = (await jsm.streams.info(RECORD_EVENT_STREAM)).state
  const ids: string[] = []
  for (let seq = first_seq; messages > 0 && seq <= last_seq; seq++) ids.push(...recordEventsOf(await jsm.streams.getMessage(RECORD_EVENT_STREAM, { seq })).map((e) => (e as RecordEvent).id))
  return ids
}
