import { describe, expect, it } from 'bun:test'
import mongoose from 'mongoose'
import { createMongoAnalyticsStore } from '../src/adapters/analytics-store.mongo'
import { mongoSkipReason, useMongoServer } from '../../../test/harness/ferretdb'
import { DAY, T0, scan, visitor } from './fixtures'

// FerretDB started by the harness, or MONGODB_URL; see README "MongoDB compatibility".
const skip = mongoSkipReason()
if (skip) console.warn(`skipping the Mongo summary round-trip suite: ${skip}`)

const code = (n: number) => `Code${n.toString().padStart(4, '0')}`

describe.skipIf(Boolean(skip))('AnalyticsStore on MongoDB: summary round trips', () => {
  const url = useMongoServer()

  it('reads a day range of any number of codes with the same three commands', async () => {
    // The driver reports every command it sends: counted, not mocked.
    const conn = mongoose.createConnection(url(), { autoIndex: false, monitorCommands: true, dbName: `lr_summary_test_${crypto.randomUUID().slice(0, 8)}` })
    await conn.asPromise()
    try {
      const store = await createMongoAnalyticsStore(conn)
      const codes = Array.from({ length: 8 }, (_, i) => code(i + 1))
      await store.applyScans(
        codes.flatMap((c, i) => [
          scan(3 * i, { code: c, scanned_at: T0 }),
          scan(3 * i + 1, { code: c, scanned_at: T0 + DAY, visitor_id: visitor(2) }),
          scan(3 * i + 2, { code: c, scanned_at: T0 + 2 * DAY }), // outside the range
        ]),
      )
      const sent: string[] = []
      conn.getClient().on('commandStarted', (event) => sent.push(event.commandName))
      const commandsFor = async (some: string[]) => {
        sent.length = 0
        const summary = await store.summary(some, { from: '2025-01-10', to: '2025-01-11' })
        expect(summary).toEqual(some.map((c) => ({ code: c, total_scans: 2, unique_scans: 2 })))
        return [...sent].sort()
      }

      const forOne = await commandsFor(codes.slice(0, 1))
      expect(forOne).toEqual(['aggregate', 'find', 'find'])
      expect(await commandsFor(codes)).toEqual(forOne)
    } finally {
      await conn.dropDatabase()
      await conn.close()
    }
  })
})
