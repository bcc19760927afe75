import type { Connection, mongo } from 'mongoose'
import { badCursor } from './cursor'

/**
 * Server-assigned list positions for the Mongo stores (README "List positions on MongoDB").
 *
 * Positions are handed out in blocks, one per batch insert. A block is a document whose `_id`
 * is its first position, inserted right after the newest block: the unique `_id` decides which
 * of several replicas gets it (the loser reads again and takes the next one), so blocks tile the
 * positions without gaps or overlaps. Only an insert on a unique key is relied on, because
 * FerretDB v1 does not apply concurrent updates of one document atomically (even `$inc` loses
 * updates), so a counter document would hand out a position twice there.
 *
 * A block stays open until its documents are written (or failed), and readers list only up to
 * the horizon, the position below the oldest open block: a page never passes a position whose
 * document may still appear, whichever replica writes it and however late its insert lands.
 */

interface BlockDoc {
  /** The block's first position. */
  _id: number
  count: number
  /** When the writer last said it is alive (ms): an open block not renewed within the lease was left by a crashed writer. */
  at: number
  open: boolean
}

/** Positions [first, first + count), open until release(). */
export interface PositionBlock {
  first: number
  release(): Promise<void>
}

export interface MongoPositions {
  /** Takes the next `count` consecutive positions, as a block open until released. */
  allocate(count: number): Promise<PositionBlock>
  /** The highest position a reader may list: every document at or below it is written. */
  horizon(): Promise<number>
}

/**
 * How long an open block holds readers back after its writer last renewed it. The writer renews
 * every third of it while its insert runs, so a slow insert keeps its hold; a writer that crashed
 * (kill -9) holds lists back for at most this long (README "List positions on MongoDB").
 */
export const OPEN_BLOCK_LEASE_MS = 5_000

/** A position as text (hex, as the SQLite stores' seq): the `next` of a page. */
export const positionText = (position: number) => position.toString(16)

/** Reverses positionText; anything else is the 400 of a cursor this API did not issue. 13 hex digits reach 2^52. */
export function positionOf(text: string): number {
  if (!/^[0-9a-f]{1,13}$/.test(text)) throw badCursor()
  return Number.parseInt(text, 16)
}

/** The positions of one collection (`scope`), kept in the collection `${scope}_positions`. */
export async function mongoPositions(conn: Connection, scope: string, leaseMs = OPEN_BLOCK_LEASE_MS): Promise<MongoPositions> {
  const blocks = conn.db!.collection<BlockDoc>(`${scope}_positions`)
  await blocks.createIndex({ open: 1, _id: 1 })
  const newest = async () => (await blocks.find({}).sort({ _id: -1 }).limit(1).toArray())[0]
  const end = (block: BlockDoc | undefined) => (block ? block._id + block.count : 1)

  return {
    async allocate(count) {
      for (;;) {
        const first = end(await newest())
        const taken = await blocks.insertOne({ _id: first, count, at: Date.now(), open: true }).then(
          () => true,
          (error: mongo.MongoServerError) => (error.code === 11000 ? false : Promise.reject(error)), // another replica took it: next one
        )
        if (!taken) continue
        // Only this writer updates its block, so the renewals need no atomic update. The release
        // waits for a renewal still on its way: on a server whose update reads the document and
        // writes it back whole (FerretDB), a renewal that read the block before the release wrote
        // `open: false` would write the block open again, holding every reader back for good.
        let renewing: Promise<unknown> = Promise.resolve()
        const renew = setInterval(() => {
          renewing = blocks.updateOne({ _id: first, open: true }, { $set: { at: Date.now() } }).catch(() => undefined)
        }, Math.floor(leaseMs / 3))
        return {
          first,
          async release() {
            clearInterval(renew)
            await renewing
            await blocks.updateOne({ _id: first }, { $set: { open: false } })
          },
        }
      }
    },

    async horizon() {
      // The newest block first: a block taken after this read lies beyond `last` anyway.
      const last = end(await newest()) - 1
      const [oldestOpen] = await blocks.find({ open: true, at: { $gt: Date.now() - leaseMs } }).sort({ _id: 1 }).limit(1).toArray()
      return oldestOpen ? Math.min(last, oldestOpen._id - 1) : last
    },
  }
}

/**
 * Gives documents written before positions existed (list order was their ObjectId) positions
 * in that order, so they stay listed. Finds nothing, in one query, once every document has one;
 * two replicas starting at once may both run it, and each document keeps the first it is given
 * (on MongoDB, whose conditional updates are atomic).
 */
export async function placeUnplaced(collection: mongo.Collection, positions: MongoPositions): Promise<void> {
  const unplaced = await collection.find({ position: { $exists: false } }, { projection: { _id: 1 } }).sort({ _id: 1 }).toArray()
  if (unplaced.length === 0) return
  const block = await positions.allocate(unplaced.length)
  try {
    await collection.bulkWrite(
      unplaced.map(({ _id }, i) => ({ updateOne: { filter: { _id, position: { $exists: false } }, update: { $set: { position: block.first + i } } } })),
    )
  } finally {
    await block.release()
  }
}

/** The filter on `position` of a page that continues after `after`, up to the horizon. */
export async function pageRange(positions: MongoPositions, after: string | undefined): Promise<{ $gt: number; $lte: number }> {
  const from = after === undefined ? 0 : positionOf(after)
  return { $gt: from, $lte: await positions.horizon() }
}
