import type { Connection, mongo } from 'mongoose'
import { badCursor } from './cursor'
import { bulkUpdate } from './mongo-bulk'
import { databaseNow } from './mongo-clock'

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
  /** The time its writer gives its documents (see PositionBlock.time); absent on blocks older than it. */
  time?: number
}

/** Positions [first, first + count), open until release(). */
export interface PositionBlock {
  first: number
  /**
   * The time the block's documents are to carry: the one asked for, or a later one when a block
   * before it carries a later one. A writer stamps its time before it takes its positions, so
   * without this a write that waited for its block (a busy server) would land after a later-stamped
   * one with an earlier time, and a client syncing by the largest time seen (README "Keeping
   * another system in sync") would never ask for it. Chained block to block, as the blocks are.
   */
  time: number
  /** Whether readers may have listed past the block (its writer stalled past the lease): asked once its documents are written, which must then move on. */
  lapsed(): boolean
  release(): Promise<void>
}

export interface MongoPositions {
  /**
   * Takes the next `count` consecutive positions, as a block open until released; its documents
   * are to carry `time` or the later time a block before it carries (PositionBlock.time). The
   * allocations a process asks for at once share one block, each its own consecutive part, and
   * the block closes once every part is released.
   */
  allocate(count: number, time?: number): Promise<PositionBlock>
  /** The highest position a reader may list: every document at or below it is written. */
  horizon(): Promise<number>
  /**
   * Deletes the blocks no reader or writer needs any more (see PRUNE_AFTER_MS), now; answers how
   * many. `release` calls it on its own, at most every tenth of the prune age, without waiting.
   */
  prune(): Promise<number>
}

/**
 * How long an open block holds readers back after its writer last renewed it. The writer renews
 * every third of it while its insert runs, so a slow insert keeps its hold; a writer that crashed
 * (kill -9) holds lists back for at most this long (README "List positions on MongoDB").
 */
export const OPEN_BLOCK_LEASE_MS = 5_000

/**
 * How old a block must be before it is deleted (README "List positions on MongoDB"). Every write
 * takes a block, so kept blocks would grow by a document per insert, update and delete. A block
 * is deleted once it is closed and a block this process took at least this long ago lies above
 * it, or once it has been open without renewal for this long (its writer died). The newest block
 * always stays: the next one is placed after it.
 *
 * Deleting a block frees its `_id`, and an allocation that read the newest block before the
 * deleted one existed would then insert there, overlapping positions already handed out. Such an
 * insert must land at least this long after its read; an allocation whose insert is acknowledged
 * more than half of it after its read closes its block unused and takes the next one
 * (landedLate), so no document is ever given a position of a freed `_id`. The prune age is measured on the monotonic clock (a suspended
 * machine only makes it later), the allocation's delay on both clocks (either may show it).
 */
export const PRUNE_AFTER_MS = 10 * 60_000

/** The two clocks a block's times are read from; the tests stand in for them. */
export interface PositionClock {
  /** Milliseconds that only move forward (performance.now()). */
  monotonic(): number
  /**
   * Epoch milliseconds every replica reads alike: what other replicas compare with a block's `at`.
   * The database server's clock (./mongo-clock.ts), so replicas whose own clocks disagree still
   * agree on which open block is alive.
   */
  wall(): number
}


export interface PositionOptions {
  /** OPEN_BLOCK_LEASE_MS unless set. */
  leaseMs?: number
  /** PRUNE_AFTER_MS unless set. */
  pruneAfterMs?: number
  /** The monotonic clock and the database server's (databaseNow) unless set. */
  clock?: PositionClock
}

/** A position as text (hex, as the SQLite stores' seq): the `next` of a page. */
export const positionText = (position: number) => position.toString(16)

/** Reverses positionText; anything else is the 400 of a cursor this API did not issue. 13 hex digits reach 2^52. */
export function positionOf(text: string): number {
  if (!/^[0-9a-f]{1,13}$/.test(text)) throw badCursor()
  return Number.parseInt(text, 16)
}

/** The positions of one collection (`scope`), kept in the collection `${scope}_positions`. */
export async function mongoPositions(conn: Connection, scope: string, options: PositionOptions = {}): Promise<MongoPositions> {
  const { leaseMs = OPEN_BLOCK_LEASE_MS, pruneAfterMs = PRUNE_AFTER_MS } = options
  const clock = options.clock ?? { monotonic: () => performance.now(), wall: await databaseNow(conn) }
  const blocks = conn.db!.collection<BlockDoc>(`${scope}_positions`)
  await blocks.createIndex({ open: 1, _id: 1 })
  const newest = async () => (await blocks.find({}).sort({ _id: -1 }).limit(1).toArray())[0]
  const end = (block: BlockDoc | undefined) => (block ? block._id + block.count : 1)

  // Blocks this process took, one per tenth of the prune age (monotonic time, first position):
  // every block below one of them was inserted before it, so once it is old enough, so are they.
  const pruneEveryMs = pruneAfterMs / 10
  const marks: { at: number; first: number }[] = []
  let lastPrune = Number.NEGATIVE_INFINITY
  let pruning: Promise<number> | undefined
  const mark = (first: number) => {
    const at = clock.monotonic()
    const last = marks.at(-1)
    if (!last || at - last.at >= pruneEveryMs) marks.push({ at, first })
  }
  const landedLate = (read: { monotonic: number; wall: number }) =>
    Math.max(clock.monotonic() - read.monotonic, clock.wall() - read.wall) > pruneAfterMs / 2

  async function prune(): Promise<number> {
    const now = clock.monotonic()
    const oldEnough = (m: { at: number }) => now - m.at >= pruneAfterMs
    // The newest mark old enough is the cut; it stays first, so no later prune cuts lower.
    while (marks.length > 1 && oldEnough(marks[1]!)) marks.shift()
    const cut = marks[0]
    if (!cut || !oldEnough(cut)) return 0
    const { deletedCount } = await blocks.deleteMany({
      _id: { $lt: cut.first },
      $or: [{ open: false }, { at: { $lt: clock.wall() - pruneAfterMs } }],
    })
    return deletedCount
  }
  const pruneWhenDue = () => {
    const now = clock.monotonic()
    if (pruning || now - lastPrune < pruneEveryMs) return
    lastPrune = now
    // A failed prune deletes nothing and is tried again at the next due release.
    pruning = prune().catch(() => 0).finally(() => (pruning = undefined))
  }

  /** One block of `count` positions in the collection, open until released. */
  async function takeBlock(count: number, time: number): Promise<PositionBlock> {
    for (;;) {
      const read = { monotonic: clock.monotonic(), wall: clock.wall() }
      const before = await newest()
      const first = end(before)
      // The block this one follows is the one read: times never go back from block to block.
      const blockTime = Math.max(time, before?.time ?? 0)
      const sent = clock.monotonic()
      const taken = await blocks.insertOne({ _id: first, count, at: clock.wall(), open: true, time: blockTime }).then(
        () => true,
        (error: mongo.MongoServerError) => (error.code === 11000 ? false : Promise.reject(error)), // another replica took it: next one
      )
      if (!taken) continue
      if (landedLate(read)) {
        // The block it followed may have been pruned meanwhile (PRUNE_AFTER_MS), so its
        // positions may be taken. No document has them yet: it is closed unused and the next
        // one taken. Closed, not deleted: a deleted block would free its `_id` at once, to an
        // allocation that read the newest block just before this one landed.
        await blocks.updateOne({ _id: first }, { $set: { open: false } })
        continue
      }
      mark(first)
      // Lapsed once a proof of life (its insert, a renewal: their send times) is acknowledged, or
      // the write asks, more than 0.8 of the lease after the last one (room for clock error).
      const lapseMs = leaseMs * 0.8
      let [alive, lapsed] = [sent, clock.monotonic() - sent > lapseMs]
      // Only this writer updates its block, so the renewals need no atomic update. The release
      // waits for every renewal still on its way (a stalled connection holds several): on a server
      // whose update reads the document and writes it back whole (FerretDB), one that read the block
      // before the release wrote `open: false` would write it open again, holding readers back.
      let renewing: Promise<unknown> = Promise.resolve()
      const renew = setInterval(() => {
        const at = clock.monotonic()
        const proof = () => void ((lapsed ||= clock.monotonic() - alive > lapseMs), (alive = Math.max(alive, at)))
        renewing = Promise.all([renewing, blocks.updateOne({ _id: first, open: true }, { $set: { at: clock.wall() } }).then(proof, () => undefined)])
      }, Math.floor(leaseMs / 3))
      return {
        first,
        time: blockTime,
        lapsed: () => lapsed || clock.monotonic() - alive > lapseMs,
        async release() {
          clearInterval(renew)
          await renewing
          await blocks.updateOne({ _id: first }, { $set: { open: false } })
          pruneWhenDue()
        },
      }
    }
  }

  // The allocations asked for while one is on its way, taken together as one block when it is
  // done: writers of one process then make one insert per round instead of racing each other
  // for the same `_id` (with 50 at once, about 440 inserts and 1.2 s on FerretDB before).
  let asked: { count: number; time: number; resolve(block: PositionBlock): void; reject(error: unknown): void }[] = []
  let taking = false
  async function takeAsked(): Promise<void> {
    taking = true
    while (asked.length > 0) {
      const group = asked
      asked = []
      try {
        const block = await takeBlock(group.reduce((sum, ask) => sum + ask.count, 0), Math.max(...group.map((ask) => ask.time)))
        shareBlock(block, group)
      } catch (error) {
        for (const ask of group) ask.reject(error)
      }
    }
    taking = false
  }

  /** Each ask its own consecutive part of the block; the block is released once every part is. */
  function shareBlock(block: PositionBlock, group: typeof asked): void {
    let open = group.length
    let offset = 0
    for (const ask of group) {
      let released = false
      ask.resolve({
        first: block.first + offset,
        time: block.time,
        lapsed: () => block.lapsed(),
        async release() {
          if (released) return
          released = true
          if (--open === 0) await block.release()
        },
      })
      offset += ask.count
    }
  }

  return {
    allocate(count, time = 0) {
      return new Promise<PositionBlock>((resolve, reject) => {
        asked.push({ count, time, resolve, reject })
        if (!taking) void takeAsked()
      })
    },

    async horizon() {
      // The newest block first: a block taken after this read lies beyond `last` anyway.
      const last = end(await newest()) - 1
      const [oldestOpen] = await blocks.find({ open: true, at: { $gt: clock.wall() - leaseMs } }).sort({ _id: 1 }).limit(1).toArray()
      return oldestOpen ? Math.min(last, oldestOpen._id - 1) : last
    },

    prune,
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
    // In short commands: every one of these updates matches a document (mongo-bulk.ts).
    await bulkUpdate(
      collection,
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
