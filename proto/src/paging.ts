import { type Static, Type as T } from '@sinclair/typebox'
import type { Status } from './library'

export const LIMIT_DEFAULT = 100
export const LIMIT_MAX = 1000

/** The orders of a list (`sort`): by a field, `-` for newest / highest first; ties by insertion, in the same direction. */
export const LIST_SORTS = ['created_at', '-created_at', 'updated_at', '-updated_at', 'name'] as const
export type ListSort = (typeof LIST_SORTS)[number]

/** Query string of the list routes, as the gateway forwards it: a string per name, all of them (an array) for a name given more than once. */
export const ListQuery = T.Record(T.String(), T.Union([T.String(), T.Array(T.String())]))
export type ListQuery = Static<typeof ListQuery>

/** A parsed list request. `after` is the store's position of the last record already seen. */
export interface ListOptions {
  limit: number
  after?: string
  updatedSince?: number
  status?: Status
  /** Changes only (LibraryStore.changes): deleted records too, as tombstones. */
  includeDeleted?: boolean
  /** true: only records with a pending change (awaiting review); false: only those without. */
  pending?: boolean
  /** List only: records carrying every one of these (lowercase) tags. */
  tags?: string[]
  /** List only: records whose name or URL contains this text, ASCII letters in either case. */
  search?: string
  /** List only: the order (default insertion); `after` is then a sort position (see @lr/library-records list-order.ts). */
  sort?: ListSort
}

/**
 * A deleted record in a list of changes (`include_deleted=true`): its id under the kind's id
 * field (`qr_id`, `code`), when it was deleted, and `updated_at`, which a delete sets to the same
 * time. A live record never carries `deleted_at` (docs/decisions.md §4, "Sync").
 */
export type Tombstone = { [idField: string]: string | number } & { deleted_at: number; updated_at: number }

export interface Page<T> {
  items: T[]
  /** Position of the last item when more may follow, else null. */
  next: string | null
}
