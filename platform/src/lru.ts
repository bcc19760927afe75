/**
 * A map of at most `entries` values whose sizes (`sizeOf`) add up to at most `budget`; the least
 * recently used goes first. A value over an eighth of the budget is not kept: one large value
 * would otherwise push out many small ones.
 */
export function createLru<V>(limits: { entries: number; budget: number }, sizeOf: (value: V) => number) {
  const kept = new Map<string, V>()
  let used = 0
  const drop = (key: string) => {
    const value = kept.get(key)
    if (value === undefined) return
    used -= sizeOf(value)
    kept.delete(key)
  }
  return {
    get(key: string): V | undefined {
      const value = kept.get(key)
      if (value === undefined) return undefined
      kept.delete(key) // to the end: the most recently used
      kept.set(key, value)
      return value
    },
    set(key: string, value: V): void {
      drop(key)
      if (sizeOf(value) > limits.budget / 8) return
      kept.set(key, value)
      used += sizeOf(value)
      for (const oldest of kept.keys()) {
        if (kept.size <= limits.entries && used <= limits.budget) break
        drop(oldest)
      }
    },
    delete: drop,
    get size() {
      return { entries: kept.size, used }
    },
  }
}
