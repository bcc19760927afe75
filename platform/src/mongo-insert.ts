import type { Connection, Model, Types } from 'mongoose'
import type { Receipt } from '@lr/proto'
import { mongoReceipts } from './idempotency-mongo'
import { mongoPositions, placeUnplaced } from './mongo-position'

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
 * document, which must stay). README "MongoDB compatibility".
 */
export async function createAtomicInsert<D extends { _id: Types.ObjectId; position: number }>(conn: Connection, model: Model<D>, scope: string) {
  const transactions = await supportsTransactions(conn)
  const receipts = await mongoReceipts(conn)
  const positions = await mongoPositions(conn, scope)
  await placeUnplaced(model.collection, positions)
  return {
    findReceipt: receipts.findReceipt,
    positions,
    async insert(unplaced: Omit<D, 'position'>[], receipt?: Receipt): Promise<void> {
      // Outside any transaction: the counter is shared by every writer and must not wait on one.
      const block = await positions.allocate(unplaced.length)
      const docs = unplaced.map((doc, i) => ({ ...doc, position: block.first + i }))
      try {
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
      } finally {
        await block.release()
      }
    },
  }
}
