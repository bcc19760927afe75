import { type Connection, type Model, Types } from 'mongoose'
import type { Receipt } from '@lr/proto'
import { type FinishPending, mongoReceipts, PENDING_GRACE_MS } from './idempotency-mongo'
import { databaseNow } from './mongo-clock'
import { mongoPositions, placeUnplaced } from './mongo-position'

export { PENDING_GRACE_MS }

/** Transactions need a replica set or mongos; a standalone server gets insert-then-clean-up. */
export async function supportsTransactions(conn: Connection): Promise<boolean> {
  const hello = await conn.db!.admin().command({ hello: 1 })
  return Boolean(hello.setName) || hello.msg === 'isdbgrid'
}

/**
 * All-or-nothing insertion of a batch of documents, with its idempotency receipt, for the Mongo
 * record stores. Each document gets the next list position of `scope` (mongo-position.ts), a
 * block claimed for the call and released once it is over. In a transaction where the server
 * has them; otherwise ordered inserts, and on any failure the documents this call inserted are
 * removed again, found by the `_id`s it assigned (a clashing unique key may belong to an older
 * document, which must stay). README "MongoDB compatibility". With `rev`, a document's change
 * position (the record stores') starts as its position too.
 *
 * Without transactions a writer can also die (kill -9) between its documents and its receipt.
 * So there the receipt goes first, naming the documents to come, and is settled once they are
 * written; the next reader of an unsettled receipt (a retry with the same Idempotency-Key)
 * writes whichever of them are missing before the answer is replayed. Every replayed 201 is
 * then stored, and nothing is stored twice: a document already written clashes on its unique id.
 */
export async function createAtomicInsert<D extends { _id: Types.ObjectId; position: number }>(conn: Connection, model: Model<D>, scope: string, opts: { rev?: boolean; times?: readonly string[] } = {}) {
  const placed = <T extends object>(doc: T, position: number) => ({ ...doc, position, ...(opts.rev && { rev: position }) })
  const timeFields = opts.times ?? []
  /** The latest of the documents' times (`opts.times`), which their block must not go below. */
  const timeOf = (docs: readonly object[]) => Math.max(0, ...docs.flatMap((doc) => timeFields.map((field) => ((doc as Record<string, unknown>)[field] as number) ?? 0)))
  /** The documents at their block's time where it is later than theirs (PositionBlock.time). */
  const atTime = <T extends object>(docs: T[], time: number): T[] =>
    timeFields.length === 0 || timeOf(docs) >= time ? docs : docs.map((doc) => ({ ...doc, ...Object.fromEntries(timeFields.map((field) => [field, time])) }))
  const transactions = await supportsTransactions(conn)
  const receipts = await mongoReceipts(conn)
  const positions = await mongoPositions(conn, scope)
  const now = await databaseNow(conn)
  await placeUnplaced(model.collection, positions)
  const owner = model.collection.collectionName
  /** Writes the documents a dead writer's receipt names and that are not there yet, then settles it. */
  async function rollForward(scope: string, key: string, pending: object[]): Promise<void> {
    const block = await positions.allocate(pending.length, timeOf(pending))
    try {
      // At the block's time when a later one was written meanwhile: the replayed answer keeps
      // the times the dead writer gave, the list of changes must not go back in time.
      for (const [i, doc] of atTime(pending, block.time).entries()) {
        await model.collection.insertOne(placed({ ...doc, _id: new Types.ObjectId() }, block.first + i) as never).catch((error: { code?: number }) => {
          if (error.code !== 11000) throw error // 11000: the dead writer got this one in
        })
      }
    } finally {
      await block.release()
    }
    await receipts.settle(scope, key)
  }

  return {
    /** The clock, receipts and owner name of this collection, for a store that adds receipted writes of its own (createReceiptedChange). */
    now,
    receipts,
    owner,
    /**
     * The receipt of (scope, key), its write finished first when a dead writer left it pending:
     * a create's documents here; a change of one document by `finishChange` (createReceiptedChange).
     */
    findReceipt(scope: string, key: string, since: number, finishChange?: FinishPending): Promise<Receipt | null> {
      return receipts.findFinished(scope, key, since, now, owner, async (receipt, write) => {
        if (write.docs) {
          await rollForward(scope, key, write.docs)
          return 'done'
        }
        return finishChange ? finishChange(receipt, write) : 'done'
      })
    },
    positions,
    /**
     * Inserts the documents, all or nothing, with the receipt made for their time, and answers
     * that time: theirs, or the later one of their block (PositionBlock.time), which `opts.times`
     * then carry as stored; and whether the block lapsed before they were written
     * (PositionBlock.lapsed: the caller must then move them to a new change position).
     */
    async insert(given: Omit<D, 'position'>[], receiptAt?: (time: number) => Receipt): Promise<{ time: number; lapsed: boolean }> {
      // Outside any transaction: the counter is shared by every writer and must not wait on one.
      const block = await positions.allocate(given.length, timeOf(given))
      const unplaced = atTime(given, block.time)
      const receipt = receiptAt?.(block.time)
      const docs = unplaced.map((doc, i) => placed(doc, block.first + i))
      try {
        if (transactions) {
          await conn.transaction(async (session) => {
            await model.insertMany(docs, { session, ordered: true })
            if (receipt) await receipts.write(receipt, session)
          })
          return { time: block.time, lapsed: block.lapsed() }
        }
        // The documents as a later reader would write them: without _id and positions, which it assigns anew.
        const held = now()
        if (receipt) await receipts.write(receipt, undefined, { write: { in: owner, docs: unplaced.map(({ _id, ...rest }) => rest) }, at: held })
        try {
          await model.insertMany(docs, { ordered: true })
        } catch (error) {
          const undo = () => model.deleteMany({ _id: { $in: docs.map((doc) => doc._id) } })
          // Unless a reader took the receipt over (this writer stalled): then the documents are its.
          await (receipt ? receipts.takeBack(receipt, held, now(), undo) : undo())
          throw error
        }
        const lapsed = block.lapsed()
        if (receipt) await receipts.settle(receipt.scope, receipt.key)
        return { time: block.time, lapsed }
      } finally {
        await block.release()
      }
    },
  }
}
