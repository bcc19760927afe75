import { describe, expect, it } from 'bun:test'
import { connectMongo } from '@lr/platform/mongo'
import { mongoPositions, placeUnplaced } from '@lr/platform/mongo-position'
import { mongo } from 'mongoose'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../test/harness/ferretdb'
import { waitUntil } from '../../test/harness/ports'
import { handClock, positionsOfBlocks } from './mongo-position.fixture'

// FerretDB started by the harness, or MONGODB_URL; see README "List positions on MongoDB".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo position pruning suite: ${skip}`)

describe.skipIf(Boolean(skip))('Mongo list positions: pruning, and documents stored before positions', () => {
  const url = useMongoServer()

  it('prunes the blocks closed before one taken a prune age ago, and keeps the newest', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    try {
      const hand = handClock()
      const positions = await mongoPositions(db.conn, 'things', { pruneAfterMs: 1000, clock: hand.clock })
      const take = async (count: number) => {
        const block = await positions.allocate(count)
        await block.release()
        return block.first
      }
      for (const count of [2, 1, 3]) await take(count) // positions 1-6, marked at t=0 (the first)
      hand.advance(200)
      const second = await take(2) // 7-8, marked at t=200
      await take(1) // 9
      hand.advance(900)
      expect(await positions.prune()).toBe(0) // t=1100: only the t=0 mark is old, and nothing lies below it
      const third = await take(4) // 10-13, marked at t=1100
      hand.advance(200)
      expect(await positions.prune()).toBe(3) // t=1300: the t=200 mark is old: blocks 1, 3 and 4 go
      expect((await positionsOfBlocks(db)).map((b) => b._id)).toEqual([second, 9, third])
      hand.advance(1000)
      expect(await positions.prune()).toBe(2) // t=2300: the t=1100 mark is old: 7 and 9 go, 10 stays (the newest)
      expect((await positionsOfBlocks(db)).map((b) => b._id)).toEqual([third])
      // Positions go on after the newest block, and the horizon is unchanged by pruning.
      expect(await positions.horizon()).toBe(13)
      expect(await take(1)).toBe(14)
    } finally {
      await db.cleanup()
    }
  })

  it('never prunes a block its live writer holds open; prunes one a crashed writer left', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    const crashed = await connectMongo(url())
    try {
      const hand = handClock()
      // A 30 ms lease: the live writer renews every 10 ms of real time, at the hand clock's time.
      const positions = await mongoPositions(db.conn, 'things', { leaseMs: 30, pruneAfterMs: 1000, clock: hand.clock })
      const other = await mongoPositions(crashed.useDb(db.conn.name, { useCache: false }), 'things', { leaseMs: 30, pruneAfterMs: 1000, clock: hand.clock })
      await (await positions.allocate(1)).release() // 1, marked at t=0
      const held = await positions.allocate(2) // 2-3, open
      await other.allocate(3) // 4-6, open, never released
      await crashed.close() // its writer is gone: no renewal reaches the server
      await (await positions.allocate(1)).release() // 7
      hand.advance(150)
      await (await positions.allocate(1)).release() // 8, marked at t=150
      hand.advance(1100)
      await Bun.sleep(40) // the live writer renews at t=1250
      await (await positions.allocate(1)).release() // 9: this release prunes too, so only what is left is counted
      await positions.prune() // the t=150 mark is old: 1, 7 and the crashed writer's 4 go
      expect((await positionsOfBlocks(db)).map((b) => [b._id, b.open])).toEqual([[2, true], [8, false], [9, false]])
      expect(await positions.horizon()).toBe(1) // the held block still holds readers back
      await held.release()
      expect(await positions.horizon()).toBe(9)
    } finally {
      await crashed.close().catch(() => undefined)
      await db.cleanup()
    }
  })

  it('closes unused a block whose insert was acknowledged half a prune age after its read, and takes the next', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    try {
      const hand = handClock()
      const positions = await mongoPositions(db.conn, 'things', { pruneAfterMs: 1000, clock: hand.clock })
      await (await positions.allocate(1)).release()
      // The allocation reads the clock before its read of the newest block and again once its
      // insert is acknowledged: 600 ms pass in between, as for a writer stalled that long.
      let readings = 0
      hand.onMonotonic = () => {
        if (++readings === 2) hand.advance(600)
      }
      const block = await positions.allocate(2)
      hand.onMonotonic = undefined
      // The block that landed late (2-3) is closed with no document; the one handed out follows it.
      expect(block.first).toBe(4)
      expect((await positionsOfBlocks(db)).map((b) => [b._id, b.count, b.open])).toEqual([[1, 1, false], [2, 2, false], [4, 2, true]])
      await block.release()
      expect(await positions.horizon()).toBe(5)
    } finally {
      await db.cleanup()
    }
  })

  it('prunes on its own from a release, at most every tenth of the prune age', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    try {
      const positions = await mongoPositions(db.conn, 'things', { pruneAfterMs: 300 })
      const taken: number[] = []
      // Four prune ages of writes: the last due prune cuts at the newest mark (one per tenth of the
      // age) a prune age old, and one still running skips the releases meanwhile, so on a slow
      // server its cut can trail the last write by well over the age (700 ms left it short of
      // half in a CI run).
      const deadline = performance.now() + 1200
      while (performance.now() < deadline) {
        const block = await positions.allocate(1)
        taken.push(block.first)
        await block.release()
        await Bun.sleep(5)
      }
      // Writes went on for four times the prune age: at least the blocks of the first half are gone.
      await waitUntil(async () => (await positionsOfBlocks(db)).length < taken.length / 2, 2000, 'blocks pruned')
      const blocks = await positionsOfBlocks(db)
      const kept = blocks.map((b) => b._id)
      expect(kept.at(-1)).toBe(taken.at(-1)!)
      // Only the oldest went: every block taken from the oldest kept on is there.
      expect(kept.filter((id) => taken.includes(id))).toEqual(taken.filter((first) => first >= kept[0]!))
      // A block among them not taken is one whose insert landed late (half this test's prune age,
      // on a loaded server), closed unused (landedLate): never one left open.
      expect(blocks.filter((b) => !taken.includes(b._id)).map((b) => b.open)).not.toContain(true)
      expect(taken).toEqual([...taken].sort((a, b) => a - b))
    } finally {
      await db.cleanup()
    }
  })

  it('gives documents stored before positions existed positions after the taken ones, in ObjectId order', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    try {
      const positions = await mongoPositions(db.conn, 'things')
      await (await positions.allocate(2)).release()
      const things = db.conn.db!.collection('things')
      const ids = [0, 1, 2].map((n) => mongo.ObjectId.createFromTime(1_700_000_000 + n))
      await things.insertMany([ids[2]!, ids[0]!, ids[1]!].map((_id) => ({ _id })))
      await placeUnplaced(things, positions)
      const placed = await things.find().sort({ position: 1 }).toArray()
      expect(placed.map((d) => [d._id.toHexString(), d.position])).toEqual(ids.map((id, i) => [id.toHexString(), 3 + i]))
      expect(await positions.horizon()).toBe(5)
    } finally {
      await db.cleanup()
    }
  })

  // One update command of them all never came back from FerretDB v1.24, and froze the database (mongo-bulk.ts).
  it('places 120 documents stored before positions existed, in ObjectId order', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    try {
      const positions = await mongoPositions(db.conn, 'things')
      const things = db.conn.db!.collection('things')
      const ids = Array.from({ length: 120 }, (_, n) => mongo.ObjectId.createFromTime(1_700_000_000 + n))
      await things.insertMany(ids.map((_id) => ({ _id })))
      await placeUnplaced(things, positions)
      const placed = await things.find().sort({ position: 1 }).toArray()
      expect(placed.map((d) => [d._id.toHexString(), d.position])).toEqual(ids.map((id, i) => [id.toHexString(), 1 + i]))
    } finally {
      await db.cleanup()
    }
  }, 10_000)
})
