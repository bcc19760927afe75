/**
 * A bounded set of recently added keys: two generations of `maxEntries / 2`; when the young one
 * fills, it becomes the old one and the oldest generation is forgotten. `has` is true for any
 * key added within the last `maxEntries / 2` to `maxEntries` adds. Forgetting is always safe for
 * its users: a forgotten key only costs the work the set saves.
 */
export function createKnownSet(maxEntries: number) {
  const half = Math.max(1, Math.floor(maxEntries / 2))
  let young = new Set<string>()
  let old = new Set<string>()
  return {
    has: (key: string) => young.has(key) || old.has(key),
    add(key: string): void {
      if (young.has(key)) return
      if (young.size >= half) {
        old = young
        young = new Set()
      }
      young.add(key)
    },
    get size() {
      return young.size + old.size
    },
  }
}
