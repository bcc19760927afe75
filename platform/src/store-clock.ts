/**
 * The clock a service stamps and compares its stored times by: its store's (`now()`, epoch ms),
 * where the store has one that every replica sharing it reads alike (MongoDB's server,
 * ./mongo-clock.ts), else this process's. SQLite has none: it is one process's own file.
 */
export const storeClockOf = (store: { now?(): number }): (() => number) => (store.now ? () => store.now!() : Date.now)

/** storeClockOf in whole epoch seconds, as records, accounts and keys carry their times. */
export function storeSecondsOf(store: { now?(): number }): () => number {
  const ms = storeClockOf(store)
  return () => Math.floor(ms() / 1000)
}
