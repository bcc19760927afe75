import type { ListOptions, Page, Receipt, ReceiptStore, Status, Tombstone } from '@lr/proto'

/** What every library record carries, whatever its kind (plus its id and URL fields). */
export interface RecordBase {
  name: string
  style: Record<string, unknown>
  /** Lowercase, distinct, ascending; [] when none (and for a record stored before tags). */
  tags: string[]
  status: Status
  team_id: string | null
  created_by: string
  created_at: number
  updated_at: number
}

/**
 * A kind's own optional fields and how both stores keep them: a number, a string, or any JSON
 * value (as JSON text). Not set (null) is absent from the record.
 */
export type OwnFields = Readonly<Record<string, 'number' | 'string' | 'json'>>

/** A record as `get` read it, with its version. */
export interface Versioned<R> {
  record: R
  /**
   * The record's change position (see LibraryStore): every insert, update and delete gives it a
   * new one, so it tells any two versions apart (a change undone later too), which is what a
   * compare-and-set write expects. A store-wide sequence: never shown to a client (the ETag is
   * a hash of the record).
   */
  rev: number
}

/** What `changes` gives for a deleted record: its id and when it was deleted. */
export const tombstoneOf = (idField: string, stored: Record<string, unknown>): Tombstone =>
  ({ [idField]: stored[idField] as string, deleted_at: stored.deleted_at as number, updated_at: stored.updated_at as number })

/** Where one kind of record lives in SQLite (the SQLite adapter's table and columns). */
export interface SqliteKind {
  table: string
  idField: string
  urlField: string
  /**
   * The kind's own optional fields: nullable columns, added to older tables (whose rows read
   * NULL). NULL is absent from the record; a PATCH's null clears one. `json` ones hold JSON text.
   * A `pending_change` among them enables ListOptions.pending.
   */
  extra?: OwnFields
}

/** Where a SQLite store's export form can be read from another thread: its file and its kind's table. */
export interface SqliteExportSource {
  path: string
  kind: SqliteKind
}

/**
 * A record as `exportPage` reads it: `style` is its JSON text. It may carry more (a SQLite row
 * keeps its position and its kind's own fields as column text): an export reads only its columns.
 */
export type Exported<R extends RecordBase> = Omit<R, 'style'> & { style: string }

/**
 * Persistence of one kind of library record, `R` as stored, `P` the fields a PATCH may change.
 * Every record is stored under its library (`libraryOf(principal)`) and every call is scoped by
 * it: a record of another library (or a deleted one) is indistinguishable from one that does not
 * exist (null), never an error. A delete is soft for every kind: the row stays as a tombstone,
 * seen only by `changes` with includeDeleted, so an id is never issued again.
 *
 * Positions: each record has two, drawn from one monotonic sequence of the store: where it was
 * inserted (`list`) and where it last changed (`changes`: its insert, an update, its delete).
 * Cores: createSqliteLibraryStore (`@lr/library-records/sqlite`), createMongoLibraryStore (`/mongo`).
 */
export interface LibraryStore<R extends RecordBase, P> extends ReceiptStore {
  /**
   * Stores the records under `library`, all or nothing. The store enforces that an id is unique
   * for ever (primary key / unique index): an id already taken, or repeated in the call, rejects
   * with StoreConflict(idField, id) and then none is stored. Other failures reject with the
   * driver's error. With `receiptOf`, the receipt (an Idempotency-Key's answer) of the records
   * as stored is stored in the same transaction; a live receipt with the same scope and key
   * rejects with ReceiptTaken. Answers the records as stored: their times may be later than
   * given, never earlier than a change stored before them (adapters/change-times.ts).
   */
  insertMany(library: string, records: R[], receiptOf?: (stored: R[]) => Receipt): Promise<R[]>

  /** The record with its version, or null when it does not exist in this library. */
  get(library: string, id: string): Promise<Versioned<R> | null>

  /**
   * A page of the library, oldest first by a monotonic position the store assigns at insert
   * (hex text). With `tags`, `search` or `sort` (list-order.ts), only the matching records, in
   * that order: `after` and `next` are then that order's positions. `after` continues from a page's `next`; records inserted meanwhile appear after
   * it, so walking every page returns every record exactly once. `updatedSince` keeps records
   * with updated_at >= it, `status` those of that status. `next` is null on the last page.
   * A position this store could not have issued is AppError('bad_request').
   */
  list(library: string, options: ListOptions): Promise<Page<R>>

  /**
   * Optional, for the CSV export: the page `list` gives with no filter, each record's `style`
   * left as the JSON text the store holds, which is the export's cell as it stands: no parse
   * and re-serialisation per row (a tenth of a SQLite export's time). A store that holds style
   * as a document leaves it out, and the export reads `list`.
   */
  exportPage?(library: string, options: { limit: number; after?: string }): Promise<Page<Exported<R>>>

  /**
   * Optional: where a Worker can read `exportPage` itself (a SQLite file and the kind's table), so
   * an export is read and formatted off the thread that answers requests (export-in-worker.ts).
   * Absent for Mongo and for an in-memory database.
   */
  readonly exportFrom?: SqliteExportSource

  /**
   * A page of the library's changes, oldest change first: every record once, at the position of
   * its last change, so a record changed after a reader passed it comes again, later. Same
   * `after`, `updatedSince`, `status` and horizon rules as `list`, over change positions (a
   * position of `list` is not one of these). With `includeDeleted`, deleted records come too, as
   * tombstones, whatever `status`.
   */
  changes(library: string, options: ListOptions): Promise<Page<R | Tombstone>>

  /**
   * Optional: a number that is different after any write to the library has committed (its
   * newest change position), read from the store itself, so writes of other processes count.
   * Only a store whose positions are drawn in commit order has it (SQLite's single writer): a
   * list reply is then reused while the number stays (list-cache.ts). MongoDB's are not (two
   * writers may commit out of draw order), so it leaves it out and every list reads the store.
   */
  changePosition?(library: string): Promise<number>

  /**
   * Applies the patch, sets updated_at and gives the record a new change position; the updated
   * record, or null when not in this library. With `expectedRev`, a compare-and-set: it applies
   * only while the record's `rev` is still that one (as `get` returned it), else null and
   * nothing changes. With `receiptOf` (an Idempotency-Key's answer, given the updated record),
   * the receipt is stored with the change, all or nothing: a live receipt with the same scope
   * and key rejects with ReceiptTaken and nothing changes. Where the store has no transactions
   * (MongoDB standalone) the receipt goes first and names the change; findReceipt then tells a
   * dead writer's applied change (its answer) from one it never made (no receipt: run it again).
   */
  update(library: string, id: string, patch: P, updatedAt: number, expectedRev?: number, receiptOf?: (updated: R) => Receipt): Promise<R | null>

  /**
   * Deletes the record at `deletedAt`: its row stays as a tombstone (deleted_at and updated_at
   * set, a new change position; the id is never issued again). The record as the delete left
   * it, or null when not in this library; with `expectedRev`, only while its `rev` is that one.
   */
  delete(library: string, id: string, deletedAt: number, expectedRev?: number): Promise<R | null>

  /**
   * Epoch milliseconds every replica sharing this store reads alike, where the store has such a
   * clock: MongoDB's server (platform/src/mongo-clock.ts). Records' created_at and updated_at are
   * stamped by it, so replicas whose own clocks disagree never write an older updated_at after a
   * newer one (the list of changes' `updated_since` recipe would miss that change). Without it
   * (SQLite: one process), this process's clock.
   */
  now?(): number
  /** True while the store answers (readiness); never rejects. */
  ping(): Promise<boolean>
}
