import { currentRequestId, outsideRequest } from './request-context'

/** One item of a batch, with what it weighs toward the batch's limit. */
export interface Weighed<T> {
  item: T
  bytes: number
}

/**
 * Items handed over in one burst of work go out together, in one `send`. The first item of a
 * batch waits only for the microtasks already queued. Under load those microtasks are the other
 * writes answered by the same commit, or read from the same socket read. An item handed over alone
 * still goes at once, within the same turn.
 *
 * Each caller's promise settles with its own batch's `send`. So a caller is answered only once its
 * item is handled, and a failed send rejects every item of that batch and no other.
 *
 * A batch holds at most `maxBytes`, counted by the items' `bytes` plus one per item (a JSON
 * array's comma). An item that would pass the limit starts the next batch. An item larger than
 * the limit goes in a batch of its own.
 *
 * A batch runs as part of its items' request when they all come from the same one (a lone item,
 * the records of one batch call), so the log lines of its send name that request. Items from
 * several requests make a batch of none of them: its lines carry no request id rather than the
 * first item's, which would tie the other requests' work to it. Each caller's own wait stays in
 * its own request.
 *
 * Why: over NATS a record event was one JetStream message with its own PubAck, delivery and ack.
 * Sent one per create, that cost the broker and the webhooks worker more than the create's own
 * insert (bench/ANALYSIS.md, seventeenth session).
 */
export function createTurnBatcher<T>(send: (items: T[]) => Promise<void>, maxBytes: number): (weighed: Weighed<T>) => Promise<void> {
  /** `shared`: its items came from more than one request (or from one and from none). */
  type Batch = { items: T[]; bytes: number; sent: Promise<void>; requestId: string | undefined; shared: boolean }
  let open: Batch | undefined
  return ({ item, bytes }) => {
    if (open && open.bytes + bytes + 1 > maxBytes) open = undefined
    const requestId = currentRequestId()
    if (!open) {
      // The reaction below runs in the context it was made in: the first item's request.
      const batch: Batch = { items: [], bytes: 1, sent: Promise.resolve(), requestId, shared: false }
      batch.sent = batch.sent.then(() => {
        if (open === batch) open = undefined
        return batch.shared ? outsideRequest(() => send(batch.items)) : send(batch.items)
      })
      open = batch
    } else if (requestId !== open.requestId) open.shared = true
    open.items.push(item)
    open.bytes += bytes + 1
    return open.sent
  }
}
