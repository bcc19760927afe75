import { describe, expect, it, setSystemTime } from 'bun:test'
import { createDatabaseClock, MAX_ROUND_TRIP_MS, RESYNC_MS, RETRY_MS } from '@lr/platform/mongo-clock'

/**
 * A server whose clock is `offset` ms off this test's hand-moved monotonic clock; each ask takes
 * the next of `trips` ms, the server reading its clock `readAt` of the way through (a slow way
 * there and a quick way back: the longer the trip, the further its middle is off).
 */
function fakeServer(offset: number, trips: number[], readAt = 0.5) {
  const state = { t: 1_000, asks: 0, failNext: false, offset }
  return {
    state,
    monotonic: () => state.t,
    ask: async (): Promise<Date | null> => {
      const trip = trips[Math.min(state.asks++, trips.length - 1)]!
      state.t += trip * readAt
      const time = new Date(Math.floor(state.t + state.offset))
      state.t += trip * (1 - readAt)
      if (state.failNext) {
        state.failNext = false
        throw new Error('the server is away')
      }
      return time
    },
  }
}

describe('the database server clock', () => {
  const SERVER = 1_795_000_000_000

  it('reads the server\'s time, keeps the reading with the shortest round trip, and counts on with the monotonic clock', async () => {
    // Read 90 % of the way: the 40 ms trip's middle is 16 ms off, the 4 ms trip's 1.6 ms.
    const server = fakeServer(SERVER, [40, 4, 30], 0.9)
    const clock = (await createDatabaseClock({ ask: server.ask, monotonic: server.monotonic }))!
    expect(server.state.asks).toBe(3)
    // Off by the kept trip's 1.6 ms at most, and localTime's and now()'s whole milliseconds.
    expect(Math.abs(clock.now() - (server.state.t + SERVER))).toBeLessThanOrEqual(3)
    server.state.t += 12_345.5
    expect(Math.abs(clock.now() - (server.state.t + SERVER))).toBeLessThanOrEqual(3)
    expect(Number.isInteger(clock.now())).toBe(true)
  })

  it('never reads this process\'s wall clock, so a process whose clock is wrong tells the server\'s time', async () => {
    const server = fakeServer(SERVER, [2])
    const clock = (await createDatabaseClock({ ask: server.ask, monotonic: server.monotonic, samples: 1 }))!
    setSystemTime(new Date(SERVER + 3_600_000)) // an hour ahead, and stopped
    try {
      server.state.t += 500
      expect(Math.abs(clock.now() - (server.state.t + SERVER))).toBeLessThanOrEqual(1)
    } finally {
      setSystemTime()
    }
  })

  it('takes a new reading in the background once one is RESYNC_MS old, and follows a server clock that moved', async () => {
    const server = fakeServer(SERVER, [2])
    const clock = (await createDatabaseClock({ ask: server.ask, monotonic: server.monotonic, samples: 1 }))!
    server.state.t += RESYNC_MS - 10
    clock.now()
    expect(server.state.asks).toBe(1)
    server.state.offset += 250 // the server's clock was stepped
    server.state.t += 20
    const expected = server.state.t + SERVER
    // Past RESYNC_MS: answers from the old reading, and asks in the background.
    expect(Math.abs(clock.now() - expected)).toBeLessThanOrEqual(1)
    await Bun.sleep(0)
    expect(server.state.asks).toBe(2)
    expect(Math.abs(clock.now() - (server.state.t + server.state.offset))).toBeLessThanOrEqual(1)
  })

  it('keeps the last reading when a new one fails or its round trip was too long to trust', async () => {
    const server = fakeServer(SERVER, [2, MAX_ROUND_TRIP_MS + 2])
    const clock = (await createDatabaseClock({ ask: server.ask, monotonic: server.monotonic, samples: 1 }))!
    server.state.offset += 250
    server.state.t += RESYNC_MS + 1
    server.state.failNext = true
    clock.now()
    await Bun.sleep(0)
    expect(server.state.asks).toBe(2)
    expect(Math.abs(clock.now() - (server.state.t + SERVER))).toBeLessThanOrEqual(1)
    expect(server.state.asks).toBe(2) // not again before RETRY_MS
    server.state.t += RETRY_MS + 1
    clock.now()
    await Bun.sleep(0)
    expect(server.state.asks).toBe(3) // answered, but after MAX_ROUND_TRIP_MS + 2 ms
    expect(Math.abs(clock.now() - (server.state.t + SERVER))).toBeLessThanOrEqual(1)
  })

  it('tells the offset of this process\'s own clock at every reading it keeps', async () => {
    const server = fakeServer(SERVER, [2])
    const offsets: number[] = []
    // This process's wall clock runs 2 s behind the server's.
    const wall = () => SERVER + server.state.t - 2_000
    const clock = (await createDatabaseClock({ ask: server.ask, monotonic: server.monotonic, samples: 1, wall, onReading: (offset) => void offsets.push(offset) }))!
    server.state.offset += 500 // then the server's clock is stepped on
    server.state.t += RESYNC_MS + 1
    clock.now()
    await Bun.sleep(0)
    expect(offsets).toHaveLength(2)
    expect(Math.abs(offsets[0]! - 2_000)).toBeLessThanOrEqual(1)
    expect(Math.abs(offsets[1]! - 2_500)).toBeLessThanOrEqual(1)
  })

  it('is null for a server that does not tell its time', async () => {
    expect(await createDatabaseClock({ ask: async () => null })).toBeNull()
  })
})
