import type { Database } from 'bun:sqlite'

interface Waiting<A extends unknown[]> {
  args: A
  resolve(): void
  reject(error: unknown): void
  error?: unknown
}

/**
 * Writes that arrive in the same turn of the event loop, committed in one transaction, each in a
 * savepoint of its own: `write` is a `db.transaction` function, which nested in another runs as a
 * savepoint, so one write that throws (an id taken, an Idempotency-Key's receipt taken) is rolled
 * back and rejected alone while the others commit. Each promise settles after the commit: a
 * resolved write is on disk as far as the database's synchronous setting goes, a rejected one
 * left nothing. Why: the commit is most of a create's cost in SQLite (measured alone, 58 µs per
 * record at one record per transaction, 17 µs at 16), and under load many creates wait at once.
 * The price is one turn of the event loop before a write starts.
 */
export function createGroupCommit<A extends unknown[]>(db: Database, write: (...args: A) => void): (...args: A) => Promise<void> {
  let waiting: Waiting<A>[] = []
  const commitAll = db.transaction((group: Waiting<A>[]) => {
    for (const item of group) {
      try {
        write(...item.args)
      } catch (error) {
        // SQLite rolls a whole transaction back on some errors (a full disk, an I/O error): then
        // the writes before this one are gone too, and no later one may run outside it.
        if (!db.inTransaction) throw error
        item.error = error
      }
    }
  })

  function commit(): void {
    const group = waiting
    waiting = []
    try {
      commitAll(group)
    } catch (error) {
      for (const item of group) item.reject(error)
      return
    }
    for (const item of group) {
      if (item.error === undefined) item.resolve()
      else item.reject(item.error)
    }
  }

  return (...args: A) =>
    new Promise<void>((resolve, reject) => {
      if (waiting.push({ args, resolve, reject }) === 1) setImmediate(commit)
    })
}
