import { describe, expect, it } from 'bun:test'
import { createLocalBus } from '@lr/platform/bus-local'
import { createLogger, installLogger } from '@lr/platform/log'
import { asHandlerOf, currentRequestId, withRequestId } from '@lr/platform/request-context'
import { type RecordEvent, WEBHOOK_SUBJECTS } from '@lr/proto'
import { busRecordEvents } from '../src/events'

installLogger(createLogger('library-records', 'warn'))

const eventOf = (n: number, pad = 0): RecordEvent => ({
  id: `evt_${n}`, type: 'record.created', library: 'acct_1', timestamp: '2026-11-25T00:00:00.000Z', data: { kind: 'dynamic', code: `c${n}`, name: 'x'.repeat(pad) },
})

/** A one-process bus whose webhooks intake keeps each request's payload as it came. */
function intake(maxPayload?: number) {
  const bus = createLocalBus({ maxPayload })
  const requests: unknown[] = []
  /** The request id each request ran under at the webhooks intake (its log lines' request_id). */
  const requestIds: (string | undefined)[] = []
  bus.serve(WEBHOOK_SUBJECTS.ingest, async (payload) => {
    requests.push(payload)
    requestIds.push(currentRequestId())
    return null
  })
  return { sink: busRecordEvents(bus), requests, requestIds }
}

describe('record events in one process', () => {
  it('go as one request per turn: the events of one burst in an array, in order, each caller answered once it is in', async () => {
    const { sink, requests } = intake()
    await Promise.all([1, 2, 3].map((n) => sink(eventOf(n))))
    expect(requests).toEqual([[eventOf(1), eventOf(2), eventOf(3)]])
  })

  it('go as the event itself when it is alone, and a later turn makes a request of its own', async () => {
    const { sink, requests } = intake()
    await sink(eventOf(1))
    await Promise.all([sink(eventOf(2)), sink(eventOf(3))])
    expect(requests).toEqual([eventOf(1), [eventOf(2), eventOf(3)]])
  })

  it("reach the webhooks as part of their request when one request made them all, and of no request when several did", async () => {
    const { sink, requests, requestIds } = intake()
    await withRequestId('req_alone', () => sink(eventOf(1)))
    await withRequestId('req_batch', () => Promise.all([sink(eventOf(2)), sink(eventOf(3))]))
    // Two creates answered by one group commit: neither request owns the batch of their events.
    await Promise.all([withRequestId('req_a', () => sink(eventOf(4))), withRequestId('req_b', () => sink(eventOf(5)))])
    expect(requests).toEqual([eventOf(1), [eventOf(2), eventOf(3)], [eventOf(4), eventOf(5)]])
    expect(requestIds).toEqual(['req_alone', 'req_batch', undefined])
  })

  it("reach the webhooks when the write's caller has stopped waiting: the write is stored", async () => {
    const { sink, requests, requestIds } = intake()
    await asHandlerOf('req_gone', Date.now() - 1, () => sink(eventOf(1)))
    expect(requests).toEqual([eventOf(1)])
    expect(requestIds).toEqual(['req_gone'])
  })

  it('are split in halves when the batch is over the bus limit, so every event still arrives once', async () => {
    const { sink, requests } = intake(2_000)
    const events = Array.from({ length: 6 }, (_, n) => eventOf(n, 500))
    await Promise.all(events.map((event) => sink(event)))
    const arrived = requests.flatMap((payload) => (Array.isArray(payload) ? payload : [payload]))
    expect(arrived).toEqual(events)
    expect(requests.length).toBeGreaterThan(1)
  })

  it('reject, as before batching, for a lone event the bus cannot carry', async () => {
    const { sink, requests } = intake(1_000)
    const refused = await sink(eventOf(1, 2_000)).then(() => null, (error) => error)
    expect(refused?.code).toBe('payload_too_large')
    expect(requests).toEqual([])
  })
})
