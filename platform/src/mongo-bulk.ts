import type { mongo } from 'mongoose'

/**
 * Update statements per bulk write command. FerretDB v1.24 (SQLite backend) never answers an
 * `update` command in which 100 or more statements match an existing document (an upsert that
 * finds its document, a `$setOnInsert` that changes nothing, a plain `$set`), and from then on
 * answers nothing on that database, in any collection, until it restarts; 99 are answered in
 * milliseconds (README "MongoDB compatibility"). MongoDB takes any number: a few more round trips.
 * Inserts (`insertMany`, even of duplicates), deletes and one `updateMany` statement matching
 * many documents are answered at any size, so only bulk updates go through here.
 */
export const UPDATES_PER_COMMAND = 50

/** The operations of a bulk write in runs of at most UPDATES_PER_COMMAND, each for one command, sent one after the other. */
function* updateCommands<T>(ops: readonly T[], size = UPDATES_PER_COMMAND): Generator<T[]> {
  for (let start = 0; start < ops.length; start += size) yield ops.slice(start, start + size)
}

/**
 * A bulk write of updates in commands of at most UPDATES_PER_COMMAND, one after the other (an
 * ordered write stops at the first command that fails). The number of documents its upserts created.
 */
export async function bulkUpdate<T extends mongo.Document>(collection: mongo.Collection<T>, ops: mongo.AnyBulkWriteOperation<T>[], options: mongo.BulkWriteOptions = {}): Promise<number> {
  let upserted = 0
  for (const command of updateCommands(ops)) upserted += (await collection.bulkWrite(command, options)).upsertedCount
  return upserted
}

/** True for a duplicate-key error (11000), alone or as every error of a bulk write. */
export function onlyDuplicateKeys(error: unknown): boolean {
  const e = error as { code?: number; writeErrors?: { code?: number }[] }
  if (e.writeErrors?.length) return e.writeErrors.every((w) => w.code === 11000)
  return e.code === 11000
}

/**
 * Upserts that several writers may make at once (a message, a batch's counters), unordered, in
 * commands of at most UPDATES_PER_COMMAND: a statement whose insert met a duplicate key lost to
 * a writer that stored it first, or was applied before (its filter excluded the document), and
 * is done; any other failure is thrown. `beforeEach` is called before each command (a writer's
 * check that it may still write: it throws to stop there).
 */
export async function bulkUpsert<T extends mongo.Document>(collection: mongo.Collection<T>, ops: mongo.AnyBulkWriteOperation<T>[], beforeEach?: () => void): Promise<void> {
  for (const command of updateCommands(ops)) {
    beforeEach?.()
    await collection.bulkWrite(command, { ordered: false }).catch((error: unknown) => {
      if (!onlyDuplicateKeys(error)) throw error
    })
  }
}
