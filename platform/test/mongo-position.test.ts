import { describe, expect, it, setSystemTime } from 'bun:test'
import { AppError } from '@lr/proto'
import { connectMongo } from '@lr/platform/mongo'
import { mongoPositions, positionOf, positionText } from '@lr/platform/mongo-position'
import { mongo } from 'mongoose'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../test/harness/ferretdb'
import { positionsOfBlocks } from './mongo-position.fixture'

describe('position text', () => {
  it('round-trips a position and rejects text it could not have made with a 400', () => {
    expect(positionOf(positionText(123_456))).toBe(123_456)
    for (const text of ['', 'XYZ', '65b1f0c2a1b2c3d4e5f60718', '-1']) expect(() => positionOf(text)).toThrow(AppError)
  })
})

// FerretDB started by the harness, or MONGODB_URL; see README "List positions on MongoDB".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo position suite: ${skip}`)

// Pruning and the placing of documents stored before positions: mongo-position-prune.test.ts.
describe.skipIf(Boolean(skip))('Mongo list positions', () => {
  const url = useMongoServer()

  it('hands replicas taking blocks at once positions 1..n, each exactly once', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    const others = await Promise.all([1, 2, 3].map(() => connectMongo(url())))
    try {
      const replicas = await Promise.all([db.conn, ...others.map((o) => o.useDb(db.conn.name, { useCache: false }))].map((c) => mongoPositions(c, 'things')))
      const taken = await Promise.all(replicas.map(async (positions, r) => {
        const mine: number[] = []
        for (let i = 0; i < 10; i++) {
          const count = 1 + ((r + i) % 3)
          const block = await positions.allocate(count)
          mine.push(...Array.from({ length: count }, (_, k) => block.first + k))
          await block.release()
        }
        return mine
      }))
      const all = taken.flat().sort((a, b) => a - b)
      expect(all).toEqual(Array.from({ length: all.length }, (_, i) => i + 1))
      expect(await replicas[0]!.horizon()).toBe(all.length)
    } finally {
      await Promise.all(others.map((o) => o.close()))
      await db.cleanup()
    }
  })

  it('keeps the horizon below an open block until it is released, whatever opened after it', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    try {
      const positions = await mongoPositions(db.conn, 'things')
      await (await positions.allocate(2)).release()
      const slow = await positions.allocate(3)
      await (await positions.allocate(1)).release()
      expect(await positions.horizon()).toBe(2)
      await slow.release()
      expect(await positions.horizon()).toBe(6)
    } finally {
      await db.cleanup()
    }
  })

  it('gives the allocations a process asks for at once one block, each its own part, open until every part is released', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    try {
      const positions = await mongoPositions(db.conn, 'things')
      await (await positions.allocate(1)).release()
      // The first is on its way alone; the four asked meanwhile share the next block.
      const parts = await Promise.all([positions.allocate(1, 10), positions.allocate(2, 30), positions.allocate(1, 20), positions.allocate(3), positions.allocate(1, 5)])
      expect(parts.map((part) => part.first)).toEqual([2, 3, 5, 6, 9])
      expect(parts.map((part) => part.time)).toEqual([10, 30, 30, 30, 30])
      expect((await positionsOfBlocks(db)).map((block) => [block._id, block.count])).toEqual([[1, 1], [2, 1], [3, 7]])
      await parts[0]!.release()
      for (const part of parts.slice(1, 4)) await part.release()
      expect(await positions.horizon()).toBe(2)
      await parts[4]!.release()
      await parts[4]!.release() // twice is once
      expect(await positions.horizon()).toBe(9)
      // The next block starts no earlier than the last one's time.
      const next = await positions.allocate(1, 7)
      expect([next.first, next.time]).toEqual([10, 30])
      await next.release()
    } finally {
      await db.cleanup()
    }
  })

  it('stops holding readers back once a crashed writer stops renewing its open block', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    const writer = await connectMongo(url())
    try {
      const reader = await mongoPositions(db.conn, 'things', { leaseMs: 300 })
      await (await mongoPositions(writer.useDb(db.conn.name, { useCache: false }), 'things', { leaseMs: 300 })).allocate(4) // never released
      expect(await reader.horizon()).toBe(0)
      await writer.close() // the writer's process is gone: no renewal reaches the server
      await Bun.sleep(450)
      expect(await reader.horizon()).toBe(4)
    } finally {
      await db.cleanup()
    }
  })

  // Replicas read a block's time by the database server's clock (mongo-clock.ts), not their own.
  it('keeps a reader whose own clock runs a minute ahead behind a live writer\'s open block', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    const writer = await connectMongo(url())
    try {
      const reader = await mongoPositions(db.conn, 'things')
      const open = await (await mongoPositions(writer.useDb(db.conn.name, { useCache: false }), 'things')).allocate(4)
      setSystemTime(new Date(Date.now() + 60_000))
      try {
        expect(await reader.horizon()).toBe(0)
      } finally {
        setSystemTime()
      }
      await open.release()
      expect(await reader.horizon()).toBe(4)
    } finally {
      await writer.close()
      await db.cleanup()
    }
  })

  it('lets a reader whose own clock runs a minute behind past a crashed writer\'s block once the lease is over', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    const writer = await connectMongo(url())
    try {
      const reader = await mongoPositions(db.conn, 'things', { leaseMs: 300 })
      await (await mongoPositions(writer.useDb(db.conn.name, { useCache: false }), 'things', { leaseMs: 300 })).allocate(4) // never released
      await writer.close()
      setSystemTime(new Date(Date.now() - 60_000))
      try {
        await Bun.sleep(450)
        expect(await reader.horizon()).toBe(4)
      } finally {
        setSystemTime()
      }
    } finally {
      await db.cleanup()
    }
  })

  it('keeps holding readers back while a live writer\'s insert outlasts the lease', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    try {
      const positions = await mongoPositions(db.conn, 'things', { leaseMs: 300 })
      const slow = await positions.allocate(4)
      await Bun.sleep(900) // three leases: only the renewals keep the block open
      expect(await positions.horizon()).toBe(0)
      await slow.release()
      expect(await positions.horizon()).toBe(4)
    } finally {
      await db.cleanup()
    }
  })

  it('lets readers past a released block even when a renewal was on its way as it was released', async () => {
    const db = await freshDatabase(url(), 'lr_positions_test')
    try {
      // A 9 ms lease renews every 3 ms: blocks held 0-4 ms are released now and then while a
      // renewal is in flight, which must not write the block open again.
      const positions = await mongoPositions(db.conn, 'things', { leaseMs: 9 })
      for (let i = 0; i < 60; i++) {
        const block = await positions.allocate(1)
        await Bun.sleep(i % 5)
        await block.release()
        await Bun.sleep(4)
        expect(await positions.horizon()).toBe(block.first)
      }
    } finally {
      await db.cleanup()
    }
  })
})
