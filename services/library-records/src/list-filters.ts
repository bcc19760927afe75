import type { ListOptions, ListSort } from '@lr/proto'
import { normaliseTags } from './field-rules'
import { foldAscii } from './list-order'

/**
 * The list's own filters and order (`sort`, `tag`, `q`), read from a decoded list query: the
 * store options and what the cursor's scope adds for them; undefined when none is given.
 * Tags are matched lowercased, as stored (duplicates dropped and sorted, so `tag=a&tag=b` and
 * `tag=B&tag=a` share their cursors); `q` folded as both stores compare it (ASCII letters).
 */
export function listFiltersOf(q: { sort?: ListSort; tag?: string[]; q?: string }): { options: Partial<ListOptions>; scope: string } | undefined {
  if (q.sort === undefined && q.tag === undefined && q.q === undefined) return undefined
  const tags = q.tag === undefined ? undefined : normaliseTags('tag', q.tag)
  const search = q.q === undefined ? undefined : foldAscii(q.q)
  const options: Partial<ListOptions> = {
    ...(q.sort !== undefined && { sort: q.sort }),
    ...(tags !== undefined && { tags }),
    ...(search !== undefined && { search }),
  }
  // JSON: a `q` may hold any character, `|` too.
  return { options, scope: `|${JSON.stringify([q.sort ?? '', tags ?? [], search ?? null])}` }
}
