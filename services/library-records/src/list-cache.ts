import { listCacheLookups } from '@lr/platform/metrics'

/** What one service keeps at most: entries, and characters of JSON text (about bytes: the text is mostly ASCII). */
export const LIST_CACHE_LIMITS = { entries: 256, chars: 4 * 1024 * 1024 }

/**
 * List replies kept as their JSON text, each with the change position its library had before
 * its page was read (LibraryStore.changePosition). A list asked again is answered from here
 * while the library's position is the same: one indexed read instead of reading the page
 * (bun:sqlite: about 1 µs per row), presenting and serialising its records. A write in the
 * library (from any process) moves the position, so no kept reply outlives it. Least recently
 * used goes first; a reply over an eighth of the budget is not kept.
 */
export function createListCache(kind: string, limits = LIST_CACHE_LIMITS) {
  const kept = new Map<string, { position: number; text: string }>()
  let chars = 0
  const drop = (key: string) => {
    chars -= kept.get(key)?.text.length ?? 0
    kept.delete(key)
  }
  const hits = listCacheLookups.labels({ kind, outcome: 'hit' })
  const misses = listCacheLookups.labels({ kind, outcome: 'miss' })

  return {
    /** The reply kept for `key` if its library is still at `position`. */
    get(key: string, position: number): string | undefined {
      const entry = kept.get(key)
      if (entry?.position !== position) {
        misses.inc()
        return undefined
      }
      hits.inc()
      kept.delete(key) // to the end: the most recently used
      kept.set(key, entry)
      return entry.text
    },

    /** Keeps `text` for `key`, read at `position` (which the caller read before the page). */
    set(key: string, position: number, text: string): void {
      drop(key)
      if (text.length > limits.chars / 8) return
      kept.set(key, { position, text })
      chars += text.length
      for (const oldest of kept.keys()) {
        if (kept.size <= limits.entries && chars <= limits.chars) break
        drop(oldest)
      }
    },

    get size() {
      return { entries: kept.size, chars }
    },
  }
}
