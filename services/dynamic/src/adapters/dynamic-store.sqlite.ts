import type { Database } from 'bun:sqlite'
import { createSqliteLibraryStore, type SqliteKind } from '@lr/library-records/sqlite'
import { seqOf } from '@lr/platform/cursor'
import { limitsOf, rulesOf } from '../kind'
import { DYNAMIC_OWN_FIELDS, type DynamicPatch, type DynamicStore, type StoredDynamic } from '../ports'

export const DYNAMIC_SQLITE: SqliteKind = { table: 'dynamic_codes', idField: 'code', urlField: 'destination_url', extra: DYNAMIC_OWN_FIELDS }

/**
 * A DynamicStore in an embedded SQLite database (see openSqlite): the shared store core, plus
 * the resolver's lookup and analytics' directory on the same table.
 */
export function createSqliteDynamicStore(db: Database): DynamicStore {
  const shared = createSqliteLibraryStore<StoredDynamic, DynamicPatch>(db, DYNAMIC_SQLITE)
  const codePage = db.prepare<{ seq: number; code: string }, [string, number, number]>(
    'SELECT seq, code FROM dynamic_codes WHERE library = ? AND seq > ? AND deleted_at IS NULL ORDER BY seq LIMIT ?',
  )
  const findOne = db.prepare<{ code: string; deleted: number }, { library: string; code: string }>(
    'SELECT code, deleted_at IS NOT NULL AS deleted FROM dynamic_codes WHERE library = $library AND code = $code',
  )
  const libraryOne = db.prepare<{ library: string }, [string]>('SELECT library FROM dynamic_codes WHERE code = ?')
  type Own = { redirect_rules: string | null; expires_at: number | null; max_scans: number | null; fallback_url: string | null }
  const lookup = db.prepare<{ code: string; destination_url: string; status: 'active' | 'draft'; deleted: number } & Own, [string]>(
    'SELECT code, destination_url, status, deleted_at IS NOT NULL AS deleted, redirect_rules, expires_at, max_scans, fallback_url FROM dynamic_codes WHERE code = ?',
  )

  return {
    ...shared,

    async resolve(code) {
      const row = lookup.get(code)
      if (!row) return null
      const rules = rulesOf({ redirect_rules: row.redirect_rules === null ? undefined : JSON.parse(row.redirect_rules) })
      return { code: row.code, destination_url: row.destination_url, status: row.status, deleted: row.deleted === 1, ...rules, ...limitsOf(row) }
    },

    async liveCodes(library, options) {
      const rows = codePage.all(library, options.after === undefined ? 0 : seqOf(options.after), options.limit + 1)
      const more = rows.length > options.limit
      if (more) rows.pop()
      return { items: rows.map((r) => r.code), next: more ? rows[rows.length - 1]!.seq.toString(16) : null }
    },

    async libraryOfCode(code) {
      return libraryOne.get(code)?.library ?? null
    },

    async findCode(library, code) {
      const row = findOne.get({ library, code })
      return row ? { code: row.code, deleted: row.deleted === 1 } : null
    },
  }
}
