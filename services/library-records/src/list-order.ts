import type { ListOptions, ListSort } from '@lr/proto'
import { badCursor } from '@lr/platform/cursor'

/**
 * The filtered and sorted list (docs/decisions.md "Tags, search and sort"), what both store
 * adapters share: which field a `sort` orders by, and the text of a sorted page's position.
 *
 * A sorted list pages by keyset: (sort key, insert position), both in the sort's direction, so
 * the insert position breaks ties and a page continues strictly after the last record seen. Its
 * position text is `<insert position hex>.<sort key hex>`: the key is a number (epoch seconds)
 * or a name, as the hex of its UTF-8; sealed in the client's cursor like any position.
 */
export type SortField = 'created_at' | 'updated_at' | 'name'
export interface SortOrder {
  field: SortField
  descending: boolean
}

export const sortOrderOf = (sort: ListSort): SortOrder => ({ field: sort.replace(/^-/, '') as SortField, descending: sort.startsWith('-') })

/** True when a list needs the filtered/sorted query rather than the plain walk by insertion. */
export const isFiltered = (options: ListOptions) => options.sort !== undefined || (options.tags?.length ?? 0) > 0 || options.search !== undefined

/** The position of a sorted page's last record. */
export function sortPositionText(position: number, field: SortField, key: unknown): string {
  const keyHex = field === 'name' ? Buffer.from(String(key), 'utf8').toString('hex') : (key as number).toString(16)
  return `${position.toString(16)}.${keyHex}`
}

/** Reverses sortPositionText for `field`; anything else is the 400 of a cursor this API did not issue. */
export function parseSortPosition(text: string, field: SortField): { position: number; key: string | number } {
  const match = /^([0-9a-f]{1,13})\.([0-9a-f]{1,1600})$/.exec(text)
  if (!match) throw badCursor()
  const position = Number.parseInt(match[1]!, 16)
  if (field !== 'name') return { position, key: Number.parseInt(match[2]!, 16) }
  if (match[2]!.length % 2 !== 0) throw badCursor()
  return { position, key: Buffer.from(match[2]!, 'hex').toString('utf8') }
}

/** `q` as both stores match it: ASCII letters folded to lowercase, every other character as it is. */
export const foldAscii = (text: string) => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase())

/** A regular expression (Mongo `$regex`) matching `search` as a substring, ASCII letters in either case. */
export function searchPattern(search: string): string {
  return [...search].map((c) => (/[a-zA-Z]/.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : /[\\^$.*+?()[\]{}|/-]/.test(c) ? `\\${c}` : c)).join('')
}
