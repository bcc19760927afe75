import { errorFields, log } from '@lr/platform/log'
import { beyondDeadline } from '@lr/platform/request-context'
import { createTurnBatcher } from '@lr/platform/turn-batch'
import { AppError, type Bus, type RecordEvent, type RecordEventSink, type RecordEventType, WEBHOOK_SUBJECTS } from '@lr/proto'
import type { RecordKind } from './kind'
import { type RecordBase, tombstoneOf } from './ports'

/** The `kind` a record event names: the kinds' service names as the API calls them. */
const KIND_LABEL: Record<string, string> = { records: 'static', dynamic: 'dynamic' }

/** A time-ordered unique id (UUIDv7), so event ids sort by when they happened. */
export const newEventId = () => `evt_${Bun.randomUUIDv7()}`

/**
 * `kind` with an `emit` that hands one RecordEvent per record to `sink` (the webhooks worker):
 * the record as answered, or its tombstone for a delete, plus its kind. The write is done when
 * it runs, so a failure is logged, never thrown: the client's answer stays the write's.
 */
export function withRecordEvents<R extends RecordBase, W, L extends string>(kind: RecordKind<R, W, L>, sink: RecordEventSink | undefined): RecordKind<R, W, L> {
  if (!sink) return kind
  const label = KIND_LABEL[kind.name] ?? kind.name
  return {
    ...kind,
    async emit(type, library, records) {
      const timestamp = new Date().toISOString()
      await Promise.all(records.map((record) => {
        // A delete sets updated_at to the time of the delete, which is the tombstone's deleted_at.
        const body = type === 'record.deleted' ? tombstoneOf(kind.idField, { deleted_at: record.updated_at, ...(record as unknown as Record<string, unknown>) }) : kind.present(record)
        return sink({ id: newEventId(), type, library, timestamp, data: { kind: label, ...(body as object) } })
      })).catch((error) => log().error({ records: records.length, type, ...errorFields(error) }, 'could not hand a record event to the webhooks'))
    },
  }
}

/**
 * TRANSPORT=memory: the events are requests to the webhooks worker of this process, which answers
 * once their deliveries are stored, so they are stored before the API answers. Those handed over
 * in one turn (the writes of one group commit, a batch) go as one request carrying an array, as
 * over NATS (record-stream.ts): a request per event cost a one-process create about as much as
 * its insert (bench/ANALYSIS.md, twenty-second session). A batch of one request's events runs as
 * part of it, so a log line of the webhooks worker carries its id; a batch of several requests'
 * events carries none (createTurnBatcher). It is sent whether or not the write's caller still
 * waits (beyondDeadline): the write is stored, so its events must reach the webhooks.
 */
export function busRecordEvents(bus: Bus): RecordEventSink {
  const send = createTurnBatcher<RecordEvent>((events) => beyondDeadline(() => ingest(bus, events)), Number.POSITIVE_INFINITY)
  return (event) => send({ item: event, bytes: 0 })
}

/**
 * One request for the batch, or, when the bus refuses it as too large before sending it, one per
 * half: the events' size is known only as text, which the bus writes anyway. A lone event too
 * large for the bus is refused as it was before batching.
 */
async function ingest(bus: Bus, events: RecordEvent[]): Promise<void> {
  try {
    await bus.request(WEBHOOK_SUBJECTS.ingest, events.length === 1 ? events[0] : events)
  } catch (error) {
    if (events.length === 1 || !(error instanceof AppError) || error.code !== 'payload_too_large') throw error
    const half = Math.ceil(events.length / 2)
    await Promise.all([ingest(bus, events.slice(0, half)), ingest(bus, events.slice(half))])
  }
}

/**
 * What every write does once stored, before it answers: the kind's own follow-up (dynamic tells
 * the resolvers) and the record events (webhooks), side by side: over NATS each waits on the
 * broker (a publish; a JetStream PubAck), so one round trip instead of two. Neither rejects.
 */
export async function afterWrite<R extends RecordBase, W, L extends string>(kind: RecordKind<R, W, L>, type: RecordEventType, library: string, records: R[]): Promise<void> {
  await Promise.all([kind.changed?.(records, type), kind.emit?.(type, library, records)])
}
