import type { Model, QueryFilter } from 'mongoose'
import type { ListOptions } from '@lr/proto'
import { parseSortPosition, searchPattern, sortOrderOf, sortPositionText } from '../list-order'
import { migrationStarted } from './migration-log'

/** What these queries read of a stored document (a LibraryDoc of mongo-store.ts). */
type ListedDoc = Record<string, unknown> & { position: number }

/**
 * Indexes of the list's filters and orders: a multikey index on tags (with position, the
 * default order) and one per sort key with position, the tie-breaker.
 */
export const LIST_INDEXES: Record<string, 1>[] = [
  { library: 1, tags: 1, position: 1 },
  { library: 1, name: 1, position: 1 },
  { library: 1, created_at: 1, position: 1 },
  { library: 1, updated_at: 1, position: 1 },
]

/**
 * Documents stored before tags get `tags: []` (they already read as []: this keeps the stored
 * data plain). Counted first, so the start of a long one is logged (migration-log.ts).
 */
export async function placeTags<D extends ListedDoc>(Model: Model<D>): Promise<void> {
  const untagged = { tags: { $exists: false } }
  const records = await Model.collection.countDocuments(untagged)
  if (records === 0) return
  const done = migrationStarted({ store: Model.collection.collectionName, records, adding: ['tags'] })
  await Model.collection.updateMany(untagged, { $set: { tags: [] } })
  done()
}

/** The conditions of `tags` (every one, `$all`) and `search` (name or URL, ASCII letters in either case). */
export function filterConditions<D extends ListedDoc>(options: ListOptions, urlField: string): QueryFilter<D>[] {
  const conditions: QueryFilter<D>[] = []
  if (options.tags?.length) conditions.push({ tags: { $all: options.tags } })
  if (options.search !== undefined) {
    // A pattern rather than the `i` option: the same ASCII-only folding as SQLite's lower(), on MongoDB and FerretDB alike.
    const $regex = searchPattern(options.search)
    conditions.push({ $or: [{ name: { $regex } }, { [urlField]: { $regex } }] })
  }
  return conditions
}

/**
 * A page of a sorted list (options.sort set): keyset by (sort key, position), both in the sort's
 * direction, strictly after `after`. `horizon` (mongo-position.ts) for `sort=created_at` only:
 * created_at never goes back in position order, so that order is the insert order, and a record
 * still being written below a newer one already listed would land behind the cursor, never met,
 * as in the plain list. Any other order needs none: a record may enter it anywhere (a name, an
 * updated_at moving) and the README promises no more than that (newest first: a new record
 * sorts before the cursor in any case).
 */
export async function sortedPage<D extends ListedDoc>(Model: Model<D>, library: string, options: ListOptions, conditions: QueryFilter<D>[], horizon: () => Promise<number>) {
  const order = sortOrderOf(options.sort!)
  const and = [...conditions]
  if (options.sort === 'created_at') and.push({ position: { $lte: await horizon() } } as QueryFilter<D>)
  if (options.updatedSince !== undefined) and.push({ updated_at: { $gte: options.updatedSince } })
  if (options.after !== undefined) {
    const { position, key } = parseSortPosition(options.after, order.field)
    const past = order.descending ? '$lt' : '$gt'
    and.push({ $or: [{ [order.field]: { [past]: key } }, { [order.field]: key, position: { [past]: position } }] })
  }
  const direction = order.descending ? -1 : 1
  const filter: QueryFilter<D> = { library, deleted_at: null, ...(options.status && { status: options.status }), ...(and.length > 0 && { $and: and }) }
  const docs = await Model.find(filter).sort({ [order.field]: direction, position: direction }).limit(options.limit + 1).lean<D[]>()
  const more = docs.length > options.limit
  if (more) docs.pop()
  const last = docs[docs.length - 1]
  return { docs, next: more && last ? sortPositionText(last.position, order.field, last[order.field]) : null }
}
