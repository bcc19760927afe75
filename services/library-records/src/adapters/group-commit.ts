import type { Database } from 'bun:sqlite'

interface Waiting<A extends unknown[]> {
  args: A
  resolve(): void
  reject(error: unknown): void
}

/** A write within this long of the last commit waits for the turn to end (the store is busy). */
export const BUSY_WITHIN_MS = 1

/**
 * Writes under load, committed together. A write that finds the store busy (a commit within
 * `busyWithinMs`) waits for the end of the event loop's turn, and the writes that arrived by then
 * run in one transaction. When one of them throws (an id taken, an Idempotency-Key's receipt
 * taken, a full disk), that transaction is rolled back whole and each write runs again in a
 * transaction of its own, so each is answered by its own outcome: savepoints would do the same
 * in one pass, but SQLite copies every page a savepoint changes to a statement journal first,
 * which cost more than the shared commit saved. A write that finds the store idle runs at once:
 * waiting for the turn cost about a millisecond in the product. Each promise settles after its
 * commit: a resolved write is on disk as far as the database's synchronous setting goes, a
 * rejected one left nothing. Why: the commit is most of a create's cost in SQLite (measured
 * alone, 58 µs per record at one record per transaction, 17 µs at 16), and under load many
 * creates wait at once. `write` must only touch `db`: it may run twice.
 */
export function createGroupCommit<A extends unknown[]>(db: Database, write: (...args: A) => void, busyWithinMs = BUSY_WITHIN_MS): (...args: A) => Promise<void> {
  let waiting: Waiting<A>[] = []
  let lastCommit = Number.NEGATIVE_INFINITY
  const one = db.transaction((item: Waiting<A>) => write(...item.args))
  const all = db.transaction((group: Waiting<A>[]) => {
    for (const item of group) write(...item.args)
  })

  /** Runs one write in its own transaction and answers it. */
  function alone(item: Waiting<A>): void {
    try {
      one(item)
    } catch (error) {
      return item.reject(error)
    }
    item.resolve()
  }

  function commit(): void {
    const group = waiting
    waiting = []
    try {
      if (group.length === 1) return alone(group[0]!)
      try {
        all(group)
      } catch {
        // Rolled back whole: each write again, alone.
        return group.forEach(alone)
      }
      for (const item of group) item.resolve()
    } finally {
      lastCommit = performance.now()
    }
  }

  return (...args: A) =>
    new Promise<void>((resolve, reject) => {
      if (waiting.push({ args, resolve, reject }) > 1) return
      if (performance.now() - lastCommit > busyWithinMs) commit()
      else setImmediate(commit)
    })
}
