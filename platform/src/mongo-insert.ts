import { type Connection, type Model, Types } from 'mongoose'
import { badCursor } from './cursor'
import type { Receipt } from '@lr/proto'
import { mongoReceipts } from './idempotency-mongo'

/** A list position of the Mongo stores (an ObjectId as 24 hex digits), or a 400. */
export function objectIdOf(position: string): Types.ObjectId {
  if (!/^[0-9a-f]{24}$/.test(position)) throw badCursor()
  return new Types.ObjectId(position)
}

/** Transactions need a replica set or mongos; a standalone server gets insert-then-clean-up. */
export async function supportsTransactions(conn: Connection): Promise<boolean> {
  const hello = await conn.db!.admin().command({ hello: 1 })
  return Boolean(hello.setName) || hello.msg === 'isdbgrid'
}

/**
 * All-or-nothing insertion of a batch of documents, with its idempotency receipt, for the Mongo
 * record stores. In a transaction where the server has them; otherwise ordered inserts, and on
 * any failure the documents this call inserted are removed again, found by the `_id`s it
 * assigned (a clashing unique key may belong to an older document, which must stay).
 */
export async function createAtomicInsert<D extends { _id: Types.ObjectId }>(conn: Connection, model: Model<D>) {
  const transactions = await supportsTransactions(conn)
  const receipts = await mongoReceipts(conn)
  return {
    findReceipt: receipts.findReceipt,
    async insert(docs: D[], receipt?: Receipt): Promise<void> {
      if (transactions) {
        await conn.transaction(async (session) => {
          await model.insertMany(docs, { session, ordered: true })
          if (receipt) await receipts.write(receipt, session)
        })
        return
      }
      try {
        await model.insertMany(docs, { ordered: true })
        if (receipt) await receipts.write(receipt)
      } catch (error) {
        await model.deleteMany({ _id: { $in: docs.map((doc) => doc._id) } })
        throw error
      }
    },
  }
}
