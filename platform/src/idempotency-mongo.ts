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
   * Without transactions the receipt is written first and names the documents its create is
   * about to insert (JSON); they are cleared once written. A receipt still holding them was left
   * by a writer that died in between: whoever reads it next writes what is missing (mongo-insert.ts).
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

/** Idempotency receipts in a service's Mongo database; see sqliteReceipts for the semantics. */
export async function mongoReceipts(conn: Connection) {
  const Receipts = (conn.models.Receipt as Model<ReceiptDoc> | undefined) ?? conn.model<ReceiptDoc>('Receipt', receiptSchema, 'receipts')
  await Receipts.createIndexes()
  const serverExpires = await createExpiryIndex(Receipts)
  return {
    /** `pending_at`: a receipt written before it was kept has none; its `created_at` (this API's seconds) stands in. */
    async findReceipt(scope: string, key: string, since: number): Promise<(Receipt & { pending: object[] | null; pending_at: number }) | null> {
      const doc = await Receipts.findOne({ scope, key, created_at: { $gte: since } }).lean()
      if (!doc) return null
      const pending = doc.pending ? JSON.parse(doc.pending) : null
      return { scope, key, fingerprint: doc.fingerprint, response: JSON.parse(doc.response), created_at: doc.created_at, pending, pending_at: doc.pending_at ?? doc.created_at * 1000 }
    },
    /** The receipt's documents are all written: it no longer names any (see `pending`). */
    async settle(scope: string, key: string): Promise<void> {
      await Receipts.updateOne({ scope, key }, { $set: { pending: null } })
    },
    /** Takes back a receipt whose create failed (without transactions; see mongo-insert.ts). */
    async remove(scope: string, key: string, created_at: number): Promise<void> {
      await Receipts.deleteOne({ scope, key, created_at })
    },
    /** `pending`: the documents to come, written at `pending.at` by the database server's clock (see ReceiptDoc). */
    async write(receipt: Receipt, session?: ClientSession, pending?: { docs: object[]; at: number }): Promise<void> {
      const expired = receipt.created_at - IDEMPOTENCY_TTL_S
      // Without a TTL index nothing else removes old receipts: sweep them here, outside the
      // transaction (an expired receipt is never read, so removing it early or late is harmless).
      if (!serverExpires) await Receipts.deleteMany({ expires_at: { $lt: new Date(receipt.created_at * 1000) } })
      // An expired receipt the TTL monitor has not removed yet must not block its key.
      await Receipts.deleteOne({ scope: receipt.scope, key: receipt.key, created_at: { $lt: expired } }, { session })
      try {
        await Receipts.create(
          [{ ...receipt, response: JSON.stringify(receipt.response), expires_at: new Date((receipt.created_at + IDEMPOTENCY_TTL_S) * 1000), pending: pending ? JSON.stringify(pending.docs) : null, pending_at: pending?.at ?? null }],
          { session },
        )
      } catch (error) {
        if ((error as { code?: number }).code === 11000) throw new ReceiptTaken()
        throw error
      }
    },
  }
}
