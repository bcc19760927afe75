import type { Connection } from 'mongoose'
import { log } from './log'
import { databaseClockOffset } from './metrics'

/**
 * The database server's clock, as one process reads it (README "List positions on MongoDB").
 *
 * The Mongo list positions (./mongo-position.ts) stamp their open blocks with a time that other
 * replicas compare with their own: a reader whose clock ran 5 s (the lease) ahead of a writer's
 * would take the writer's open block for a crashed one and list past it, and the documents landing
 * there would then lie behind its cursor. So every replica tells that time by one clock, the
 * server's: `hello` answers its `localTime`, and this process counts on from it with its monotonic
 * clock. Its own wall clock never enters, so a replica whose clock is wrong, or is stepped while
 * it runs, reads the same time as the others, give or take half a round trip.
 */
export interface DatabaseClock {
  /** Epoch milliseconds on the server's clock, whole as Date.now()'s. */
  now(): number
}

/**
 * One reading of the server's clock: its time, this process's monotonic time around the ask, and
 * how far this process's own wall clock was behind the server's then (`offset`, ms).
 */
type Reading = { server: number; sent: number; back: number; offset: number }

export interface DatabaseClockOptions {
  /** The server's time now (its `hello`'s `localTime`); null when it does not say. */
  ask: () => Promise<Date | null>
  /** Milliseconds that only move forward; performance.now() unless set (the tests move their own). */
  monotonic?: () => number
  /** How long a reading is counted on before the next one is taken, in the background. */
  resyncMs?: number
  /** Readings taken at the start, the one with the shortest round trip kept. */
  samples?: number
  /** This process's own wall clock, only to tell how far it is off (onReading); Date.now() unless set. */
  wall?: () => number
  /** Told the offset (server minus this process's wall clock, ms) of every reading the clock keeps. */
  onReading?: (offsetMs: number) => void
}

/** A reading counted on for longer could drift by milliseconds (a monotonic clock's rate is good to parts per million). */
export const RESYNC_MS = 60_000
/** How long after a reading that failed (or was not trusted) the next is tried. */
export const RETRY_MS = 5_000
/** A reading whose round trip took longer than this is not taken for a newer one: its error could pass a tenth of the lease. */
export const MAX_ROUND_TRIP_MS = 1_000

/**
 * A clock counting on from the server's. `localTime` has whole milliseconds and was read somewhere
 * between sending and the answer: the middle of the round trip, half a millisecond on, is the
 * best guess, wrong by at most half the round trip. A server that does not say its time (none of
 * those the product supports) leaves this process's wall clock in use: `null`.
 */
export async function createDatabaseClock(options: DatabaseClockOptions): Promise<DatabaseClock | null> {
  const { ask, monotonic = () => performance.now(), resyncMs = RESYNC_MS, samples = 3, wall = Date.now, onReading } = options
  async function read(): Promise<Reading | null> {
    const sent = monotonic()
    const wallSent = wall()
    const time = await ask()
    if (!time) return null
    const server = time.getTime() + 0.5
    return { server, sent, back: monotonic(), offset: server - (wallSent + wall()) / 2 }
  }
  const keep = (reading: Reading) => {
    kept = reading
    onReading?.(reading.offset)
  }
  const trip = (reading: Reading) => reading.back - reading.sent
  let anchor: Reading | null = null
  for (let i = 0; i < samples; i++) {
    const reading = await read()
    if (!reading) return null
    if (!anchor || trip(reading) < trip(anchor)) anchor = reading
  }
  let kept: Reading = anchor!
  keep(kept)
  /** When the next reading is taken: resyncMs after the kept one, or RETRY_MS after a try that failed. */
  let due = kept.back + resyncMs
  const resync = (at: number) => {
    due = at + RETRY_MS
    // A failed or slow reading keeps the last one; the clock tries again RETRY_MS later.
    read().then(
      (reading) => {
        if (reading && trip(reading) <= MAX_ROUND_TRIP_MS) keep(reading), (due = reading.back + resyncMs)
      },
      () => undefined,
    )
  }
  return {
    now() {
      const at = monotonic()
      if (at > due) resync(at)
      return Math.floor(kept.server + (at - (kept.sent + kept.back) / 2))
    },
  }
}

/** A process whose clock is further off the server's than this is told so in its log, once. */
export const OFFSET_WARN_MS = 1_000

let warned = false
/** Every reading's offset as `lr_database_clock_offset_seconds`; one warning when it passes OFFSET_WARN_MS. */
function reportOffset(offsetMs: number): void {
  databaseClockOffset.set({ store: 'mongodb' }, offsetMs / 1000)
  if (warned || Math.abs(offsetMs) <= OFFSET_WARN_MS) return
  warned = true
  log().warn(
    { offset_ms: Math.round(offsetMs) },
    "this process's clock is off the database server's: the stores' times (list positions, records, keys, webhook claims) are the server's; its log lines' are its own",
  )
}

const clocks = new WeakMap<Connection, Promise<DatabaseClock | null>>()

let warnedNoTime = false
/**
 * What a Mongo adapter stamps and compares its times by: `conn`'s server clock (databaseClock),
 * or this process's where the server does not tell its time (none the product supports), with
 * one warning, since replicas' clocks must then agree.
 */
export async function databaseNow(conn: Connection): Promise<() => number> {
  const clock = await databaseClock(conn)
  if (clock) return clock.now
  if (!warnedNoTime) {
    warnedNoTime = true
    log().warn({}, "the database server does not tell its time (hello's localTime): this process's clock stands in, so replicas' clocks must agree (within 5 s for list positions)")
  }
  return () => Date.now()
}

/** The server clock of `conn`'s database, one per connection (createDatabaseClock). */
export function databaseClock(conn: Connection): Promise<DatabaseClock | null> {
  let clock = clocks.get(conn)
  if (!clock) {
    clock = createDatabaseClock({
      ask: async () => {
        const { localTime } = await conn.db!.admin().command({ hello: 1 })
        return localTime instanceof Date ? localTime : null
      },
      onReading: reportOffset,
    })
    clocks.set(conn, clock)
    // A failed first reading is not kept: the next store to open asks again.
    clock.catch(() => clocks.delete(conn))
  }
  return clock
}
