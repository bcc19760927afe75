import type { PositionClock } from '@lr/platform/mongo-position'

/** A clock the test moves by hand; `onMonotonic` runs before each monotonic reading. */
export function handClock() {
  let t = 0
  const wall0 = Date.now()
  const hand = {
    advance: (ms: number) => void (t += ms),
    onMonotonic: undefined as (() => void) | undefined,
    clock: {
      monotonic: () => {
        hand.onMonotonic?.()
        return t
      },
      wall: () => wall0 + t,
    } satisfies PositionClock,
  }
  return hand
}

export const positionsOfBlocks = async (db: { conn: import('mongoose').Connection }) =>
  (await db.conn.db!.collection<{ _id: number; count: number; open: boolean; at: number }>('things_positions').find().sort({ _id: 1 }).toArray())
