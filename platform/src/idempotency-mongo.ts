import { type ClientSession, type Connection, type Model, Schema } from 'mongoose'
import { IDEMPOTENCY_TTL_S, type Receipt, ReceiptTaken } from '@lr/proto'

interface ReceiptDoc {
  scope: string
  key: string
  fingerprint: string
  response: string
  created_at: number
  expires_at: Date
  /**
   * Without transactions the receipt is written first and names the write it answers for (a
   * PendingWrite as JSON), cleared once done. A receipt still holding it was left by a writer
   * that died in between: whoever reads it next finishes or drops it (findFinished).
   */
  pending?: string | null
  /** When a pending receipt was written, by the database server's clock (ms, ./mongo-clock.ts): how long its writer has been at it. */
  pending_at?: number | null
}

const receiptSchema = new Schema<ReceiptDoc>(
  {
    scope: { type: String, required: true },
    key: { type: String, required: true },
    fingerprint: { type: String, required: true },
    response: { type: String, required: true },
    created_at: { type: Number, required: true },
    /** For the TTL index (createExpiryIndex): MongoDB removes receipts a day after they were written. */
    expires_at: { type: Date, required: true },
    pending: { type: String, default: null },
    pending_at: { type: Number, default: null },
  },
  { versionKey: false },
)
receiptSchema.index({ scope: 1, key: 1 }, { unique: true })

/** The server's answer to an index option it does not implement (FerretDB v1: expireAfterSeconds). */
const NOT_IMPLEMENTED = 238

/**
 * The TTL index that lets the server remove expired receipts. Returns false when the server
 * does not implement TTL indexes (README "MongoDB compatibility"); the caller then removes
 * expired receipts itself, through a plain index on the same field.
 */
async function createExpiryIndex(Receipts: Model<ReceiptDoc>): Promise<boolean> {
  try {
    await Receipts.collection.createIndex({ expires_at: 1 }, { name: 'expires_at_ttl', expireAfterSeconds: 0 })
    return true
  } catch (error) {
    if ((error as { code?: number }).code !== NOT_IMPLEMENTED) throw error
    await Receipts.collection.createIndex({ expires_at: 1 }, { name: 'expires_at' })
    return false
  }
}

/**
 * The write a receipt written first answers for (without transactions): documents a create is
 * about to insert, or a change of one document. `in` names the collection, so only the service
 * that owns it finishes the write; anyone else reading the receipt asks with another route, so
 * another fingerprint, and answers 422 without touching it.
 */
export interface PendingWrite {
  /** The collection written; absent in a receipt written before it was kept (a create's documents). */
  in?: string
  /** A create's documents, without _id and positions, which a later reader assigns anew. */
  docs?: object[]
  /** A change of one document (a review): what tells a later reader whether it was applied. */
  change?: { library: string; id: string; marker: string }
}

/** What a receipt's reader does with one left pending by a dead writer: 'done' once written, 'dropped' once the receipt is taken back. */
export type FinishPending = (receipt: Receipt, write: PendingWrite) => Promise<'done' | 'dropped'>

/** How long a receipt may name an unfinished write before its writer is taken for dead, by the database server's clock (./mongo-clock.ts). */
export const PENDING_GRACE_MS = 5_000

/** Idempotency receipts in a service's Mongo database; see sqliteReceipts for the semantics. */
export async function mongoReceipts(conn: Connection) {
  const Receipts = (conn.models.Receipt as Model<ReceiptDoc> | undefined) ?? conn.model<ReceiptDoc>('Receipt', receiptSchema, 'receipts')
  await Receipts.createIndexes()
  const serverExpires = await createExpiryIndex(Receipts)
  return {
    /** `pending_at`: a receipt written before it was kept has none; its `created_at` (this API's seconds) stands in. */
    async findReceipt(scope: string, key: string, since: number): Promise<(Receipt & { pending: PendingWrite | null; pending_at: number; stamp: number | null }) | null> {
      const doc = await Receipts.findOne({ scope, key, created_at: { $gte: since } }).lean()
      if (!doc) return null
      const stored = doc.pending ? JSON.parse(doc.pending) : null
      // A receipt written before PendingWrite held the create's documents alone.
      const pending: PendingWrite | null = Array.isArray(stored) ? { docs: stored } : stored
      const stamp = doc.pending_at ?? null
      return { scope, key, fingerprint: doc.fingerprint, response: JSON.parse(doc.response), created_at: doc.created_at, pending, pending_at: stamp ?? doc.created_at * 1000, stamp }
    },
    /**
     * Moves a pending receipt's `pending_at` from `from` to `to`, unless someone did first: whoever
     * does holds its write for PENDING_GRACE_MS more. A reader takes a dead writer's write over so
     * (findFinished), and a writer that failed renews its hold before it takes its documents back:
     * when it finds the receipt taken over (false), they are a reader's to finish and stay.
     */
    async hold(scope: string, key: string, from: number | null, to: number): Promise<boolean> {
      const { modifiedCount } = await Receipts.updateOne({ scope, key, pending: { $ne: null }, pending_at: from }, { $set: { pending_at: to } })
      return modifiedCount === 1
    },
    /**
     * The receipt of (scope, key) once no writer is at it any more: a pending one is waited for
     * while its writer may be alive (PENDING_GRACE_MS by the server's clock `now`), then, when
     * it names a write in `owner`, finished by `finish`, which may also drop it (then null).
     * A pending receipt of another collection is answered as it stands: its request was another.
     */
    async findFinished(scope: string, key: string, since: number, now: () => number, owner: string, finish: FinishPending): Promise<Receipt | null> {
      for (;;) {
        const found = await this.findReceipt(scope, key, since)
        if (!found) return null
        const { pending, pending_at, stamp, ...receipt } = found
        if (!pending || (pending.in ?? owner) !== owner) return receipt
        // A twin of a write still running: its writer settles the receipt in a moment. Only a
        // receipt unsettled for longer than any live write takes was left by a dead writer.
        if (now() - pending_at < PENDING_GRACE_MS) {
          await Bun.sleep(50)
          continue
        }
        // Taken over first, so a writer that was only stalled, and wakes to a failed write (its
        // documents clash with those written here), leaves its documents and the receipt alone.
        if (!(await this.hold(scope, key, stamp, now()))) continue
        return (await finish(receipt, pending)) === 'done' ? receipt : null
      }
    },
    /** The receipt's write is done: it no longer names it (see `pending`); with `response`, the answer as written. */
    async settle(scope: string, key: string, response?: unknown): Promise<void> {
      await Receipts.updateOne({ scope, key }, { $set: { pending: null, ...(response !== undefined && { response: JSON.stringify(response) }) } })
    },
    /** Takes back a receipt whose write failed or never happened (without transactions; see mongo-insert.ts). */
    async remove(scope: string, key: string, created_at: number): Promise<void> {
      await Receipts.deleteOne({ scope, key, created_at })
    },
    /**
     * After a write that failed, its receipt written first and held since `from`: `undo` takes
     * the write back, then the receipt goes, both held anew at `to` (see hold). Unless a reader
     * took the receipt over, taking this writer, stalled past the grace, for dead: its write is
     * that reader's to finish (it may be why this one failed, on a clash with what the reader
     * wrote), so nothing is taken back, and ReceiptTaken has the receipt's answer replayed.
     */
    async takeBack(receipt: Receipt, from: number, to: number, undo: () => Promise<unknown>): Promise<void> {
      if (!(await this.hold(receipt.scope, receipt.key, from, to))) throw new ReceiptTaken()
      await undo()
      await Receipts.deleteOne({ scope: receipt.scope, key: receipt.key, created_at: receipt.created_at, pending_at: to })
    },
    /** `pending`: the write to come, started at `pending.at` by the database server's clock (see ReceiptDoc). */
    async write(receipt: Receipt, session?: ClientSession, pending?: { write: PendingWrite; at: number }): Promise<void> {
      const expired = receipt.created_at - IDEMPOTENCY_TTL_S
      // Without a TTL index nothing else removes old receipts: sweep them here, outside the
      // transaction (an expired receipt is never read, so removing it early or late is harmless).
      if (!serverExpires) await Receipts.deleteMany({ expires_at: { $lt: new Date(receipt.created_at * 1000) } })
      // An expired receipt the TTL monitor has not removed yet must not block its key.
      await Receipts.deleteOne({ scope: receipt.scope, key: receipt.key, created_at: { $lt: expired } }, { session })
      try {
        await Receipts.create(
          [{ ...receipt, response: JSON.stringify(receipt.response), expires_at: new Date((receipt.created_at + IDEMPOTENCY_TTL_S) * 1000), pending: pending ? JSON.stringify(pending.write) : null, pending_at: pending?.at ?? null }],
          { session },
        )
      } catch (error) {
        if ((error as { code?: number }).code === 11000) throw new ReceiptTaken()
        throw error
      }
    },
  }
}
