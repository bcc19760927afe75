import type { Model, QueryFilter } from 'mongoose'
import type { Receipt } from '@lr/proto'
import type { FinishPending, mongoReceipts } from '@lr/platform/idempotency-mongo'

/** What a receipted change needs of its store (createMongoLibraryStore). */
interface ChangeParts<R, D> {
  Model: Model<D>
  idField: string
  receipts: Awaited<ReturnType<typeof mongoReceipts>>
  /** The database server's clock (ms). */
  now: () => number
  /** The collection: a receipt names it, so only this store finishes its writes. */
  owner: string
  /** The store's compare-and-set of one document (a new change position). */
  change(filter: QueryFilter<D>, set: Record<string, unknown>): Promise<D | null>
  toRecord(doc: D): R
}

/**
 * A change of one document with its Idempotency-Key's receipt, without transactions (one path
 * for a replica set and a standalone server alike; reviews are rare). The receipt goes first,
 * naming the document and a marker; the change sets the marker on the document in the same
 * single-document write; then the receipt is settled with the answer. A writer killed in between
 * leaves a pending receipt, which its next reader (a retry, findReceipt) finishes: the marker on
 * the document says the change was made (the receipt's answer, predicted from the document as
 * read, stands); no marker says it never was, so the receipt is taken back and the retry runs
 * the request again, as the first never answered. (Should two more receipted changes of the
 * same document land before that retry, the marker is theirs, and the retry runs again: of a
 * review, a 409, as nothing is pending.)
 */
export function createReceiptedChange<R, D extends object>({ Model, idField, receipts, now, owner, change, toRecord }: ChangeParts<R, D>) {
  const markerOf = (receipt: Receipt) => `${receipt.scope}\n${receipt.key}\n${receipt.created_at}`

  /** FinishPending for a change a dead writer's receipt names (see above). */
  const finish: FinishPending = async (receipt, write) => {
    if (!write.change) return 'done'
    const { library, id, marker } = write.change
    const doc = await Model.collection.findOne({ library, [idField]: id }, { projection: { receipt_marker: 1 } })
    if (doc?.receipt_marker === marker) {
      await receipts.settle(receipt.scope, receipt.key)
      return 'done'
    }
    await receipts.remove(receipt.scope, receipt.key, receipt.created_at)
    return 'dropped'
  }

  async function update(library: string, id: string, filter: QueryFilter<D>, set: Record<string, unknown>, receiptOf: (updated: R) => Receipt): Promise<R | null> {
    const current = await Model.findOne(filter).lean<D>()
    if (!current) return null
    // The answer should the writer die after its change: the document as read, changed as asked.
    const predicted = receiptOf(toRecord({ ...current, ...set }))
    const marker = markerOf(predicted)
    await receipts.write(predicted, undefined, { write: { in: owner, change: { library, id, marker } }, at: now() })
    // Should this fail, whether it landed is unknown (a connection lost after the write): the
    // receipt stays pending, and its next reader, past the grace, finds the marker or takes it back.
    const doc = await change(filter, { ...set, receipt_marker: marker })
    if (!doc) {
      // Changed meanwhile (compare-and-set): the caller reads it again, with a new receipt.
      await receipts.remove(predicted.scope, predicted.key, predicted.created_at)
      return null
    }
    const updated = toRecord(doc)
    await receipts.settle(predicted.scope, predicted.key, receiptOf(updated).response)
    return updated
  }

  return { update, finish }
}
