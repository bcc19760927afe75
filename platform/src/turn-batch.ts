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
 * Why: over NATS a record event was one JetStream message with its own PubAck, delivery and ack.
 * Sent one per create, that cost the broker and the webhooks worker more than the create's own
 * insert (bench/ANALYSIS.md, seventeenth session).
 */
export function createTurnBatcher<T>(send: (items: T[]) => Promise<void>, maxBytes: number): (weighed: Weighed<T>) => Promise<void> {
  let open: { items: T[]; bytes: number; sent: Promise<void> } | undefined
  return ({ item, bytes }) => {
    if (open && open.bytes + bytes + 1 > maxBytes) open = undefined
    if (!open) {
      const batch: { items: T[]; bytes: number; sent: Promise<void> } = { items: [], bytes: 1, sent: Promise.resolve() }
      batch.sent = batch.sent.then(() => {
        if (open === batch) open = undefined
        return send(batch.items)
      })
      open = batch
    }
    open.items.push(item)
    open.bytes += bytes + 1
    return open.sent
  }
}
