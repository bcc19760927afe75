import { pageTagOf } from '@lr/platform/kept-list'
import { createLru } from '@lr/platform/lru'
import { listCacheLookups } from '@lr/platform/metrics'

/** A kept reply: its text, the position it was read at, and its tag for gateways (kept-list.ts). */
export interface Kept {
  position: number
  text: string
  tag: string
}

/** What one service keeps at most: entries, and characters of JSON text (about bytes: the text is mostly ASCII). */
export const LIST_CACHE_LIMITS = { entries: 256, budget: 2 * 1024 * 1024 }

/**
 * List replies kept as their JSON text, each with the change position its library had before
 * its page was read (LibraryStore.changePosition). A list asked again is answered from here
 * while the library's position is the same: one indexed read instead of reading the page
 * (bun:sqlite: about 1 µs per row), presenting and serialising its records. A write in the
 * library (from any process) moves the position, so no kept reply outlives it. Least recently
 * used goes first; a reply over an eighth of the budget is not kept.
 */
export function createListCache(kind: string, limits = LIST_CACHE_LIMITS) {
  const kept = createLru<Kept>(limits, (entry) => entry.text.length)
  const hits = listCacheLookups.labels({ kind, outcome: 'hit' })
  const misses = listCacheLookups.labels({ kind, outcome: 'miss' })

  return {
    /** The reply kept for `key` if its library is still at `position`. */
    get(key: string, position: number): Kept | undefined {
      const entry = kept.get(key)
      if (entry?.position !== position) {
        misses.inc()
        return undefined
      }
      hits.inc()
      return entry
    },

    /** Keeps `text` for `key`, read at `position` (which the caller read before the page), and answers it with its tag. */
    set(key: string, position: number, text: string): Kept {
      const entry = { position, text, tag: pageTagOf(position, text) }
      kept.set(key, entry)
      return entry
    },

    get size() {
      return { entries: kept.size.entries, chars: kept.size.used }
    },
  }
}
