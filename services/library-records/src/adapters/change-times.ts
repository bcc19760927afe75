import type { RecordBase } from '../ports'

/**
 * The times of the list of changes never go back in its order (README "Keeping another system
 * in sync": a client asks for what changed since the largest `updated_at` it saw). A write
 * stamps its time before the store gives it its change position, so a write that waited (for a
 * Mongo position block, or for the SQLite group commit after an Idempotency-Key lookup) could
 * land after a later-stamped one with an earlier time: the stores stamp it no earlier than the
 * change before it, and answer the records as stored.
 */

/** The latest time of new records (a create stamps both of a record's times alike). */
export const latestOf = (records: readonly RecordBase[]): number => records.reduce((latest, r) => Math.max(latest, r.updated_at), 0)

/** New records at `time` where it is later than theirs, both times alike. */
export const recordsAt = <R extends RecordBase>(records: R[], time: number): R[] =>
  latestOf(records) >= time ? records : records.map((record) => ({ ...record, created_at: time, updated_at: time }))
