import { type Database, SQLiteError } from 'bun:sqlite'
import { type Account, type KeyScope, type Membership, StoreConflict, type Team } from '@lr/proto'
import { addMissingColumns } from '@lr/platform/sqlite'
import type { AccountChanges, AuthStore, StoredKey } from '../ports'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS accounts (
  account_id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, tier TEXT NOT NULL,
  api_grant_until INTEGER, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS teams (team_id TEXT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS memberships (
  team_id TEXT NOT NULL REFERENCES teams, account_id TEXT NOT NULL REFERENCES accounts,
  role TEXT NOT NULL, PRIMARY KEY (team_id, account_id));
CREATE TABLE IF NOT EXISTS api_keys (
  key_id TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts, scope TEXT NOT NULL,
  team_id TEXT REFERENCES teams, hash TEXT NOT NULL UNIQUE, last_four TEXT NOT NULL,
  created_at INTEGER NOT NULL, active_at INTEGER NOT NULL, revoked_at INTEGER, last_used_at INTEGER);
CREATE UNIQUE INDEX IF NOT EXISTS api_keys_one_live ON api_keys (account_id, scope) WHERE revoked_at IS NULL;
CREATE INDEX IF NOT EXISTS api_keys_by_account ON api_keys (account_id, created_at);
CREATE INDEX IF NOT EXISTS teams_by_name ON teams (name);
`

/** The columns a UNIQUE / PRIMARY KEY violation names, or null for any other error. */
function violatedColumns(error: unknown): string | null {
  if (!(error instanceof SQLiteError)) return null
  if (error.code !== 'SQLITE_CONSTRAINT_UNIQUE' && error.code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return null
  return error.message
}

/** AuthStore over bun:sqlite; creates its tables. Open `db` with openSqlite from @lr/proto/sqlite. */
export function createSqliteAuthStore(db: Database): AuthStore {
  db.exec(SCHEMA)
  // Added after the first release.
  addMissingColumns(db, 'api_keys', { name: 'TEXT' })
  const keyBy = (column: 'key_id' | 'hash') => db.query<StoredKey, [string]>(`SELECT * FROM api_keys WHERE ${column} = ?`)
  const q = {
    insertAccount: db.query(
      'INSERT INTO accounts VALUES ($account_id, $email, $tier, $api_grant_until, $created_at)',
    ),
    getAccount: db.query<Account, [string]>('SELECT * FROM accounts WHERE account_id = ?'),
    findAccountByEmail: db.query<Account, [string]>('SELECT * FROM accounts WHERE email = ?'),
    listAccounts: db.query<Account, [string, number]>('SELECT * FROM accounts WHERE email > ? ORDER BY email LIMIT ?'),
    insertTeam: db.query('INSERT INTO teams VALUES ($team_id, $name)'),
    getTeam: db.query<Team, [string]>('SELECT * FROM teams WHERE team_id = ?'),
    findTeamsByName: db.query<Team, [string]>('SELECT * FROM teams WHERE name = ? ORDER BY team_id'),
    putMembership: db.query(
      `INSERT INTO memberships VALUES ($team_id, $account_id, $role)
       ON CONFLICT (team_id, account_id) DO UPDATE SET role = excluded.role`,
    ),
    getMembership: db.query<Membership, [string, string]>('SELECT * FROM memberships WHERE team_id = ? AND account_id = ?'),
    listMembers: db.query<Membership, [string]>('SELECT * FROM memberships WHERE team_id = ? ORDER BY account_id'),
    removeMembership: db.query('DELETE FROM memberships WHERE team_id = ? AND account_id = ?'),
    insertKey: db.query(
      `INSERT INTO api_keys (key_id, account_id, scope, name, team_id, hash, last_four, created_at, active_at, revoked_at, last_used_at)
       VALUES ($key_id, $account_id, $scope, $name, $team_id, $hash, $last_four, $created_at, $active_at, $revoked_at, $last_used_at)`,
    ),
    getKey: keyBy('key_id'),
    findKeyByHash: keyBy('hash'),
    findLiveKey: db.query<StoredKey, [string, string]>(
      'SELECT * FROM api_keys WHERE account_id = ? AND scope = ? AND revoked_at IS NULL',
    ),
    listKeys: db.query<StoredKey, [string]>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, rowid'),
    revokeKey: db.query('UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL'),
    touchKey: db.query(
      'UPDATE api_keys SET last_used_at = $at WHERE key_id = $key_id AND (last_used_at IS NULL OR last_used_at < $at)',
    ),
  }

  return {
    async insertAccount(account) {
      try {
        q.insertAccount.run(account)
      } catch (error) {
        const columns = violatedColumns(error)
        if (columns?.includes('accounts.email')) throw new StoreConflict('email', account.email)
        if (columns) throw new StoreConflict('account_id', account.account_id)
        throw error
      }
    },
    getAccount: async (accountId) => q.getAccount.get(accountId),
    findAccountByEmail: async (email) => q.findAccountByEmail.get(email),
    listAccounts: async (afterEmail, limit) => q.listAccounts.all(afterEmail ?? '', limit),
    async updateAccount(accountId, changes: AccountChanges) {
      const sets = (['tier', 'api_grant_until'] as const).filter((column) => changes[column] !== undefined)
      if (sets.length > 0) {
        const values = Object.fromEntries(sets.map((column) => [column, changes[column]]))
        db.query(`UPDATE accounts SET ${sets.map((c) => `${c} = $${c}`).join(', ')} WHERE account_id = $account_id`).run({
          ...values,
          account_id: accountId,
        })
      }
      return q.getAccount.get(accountId)
    },

    async insertTeam(team, adminId) {
      try {
        db.transaction(() => {
          q.insertTeam.run(team)
          q.putMembership.run({ team_id: team.team_id, account_id: adminId, role: 'admin' })
        })()
      } catch (error) {
        if (violatedColumns(error)) throw new StoreConflict('team_id', team.team_id)
        throw error
      }
    },
    getTeam: async (teamId) => q.getTeam.get(teamId),
    findTeamsByName: async (name) => q.findTeamsByName.all(name),

    putMembership: async (membership) => void q.putMembership.run(membership),
    getMembership: async (teamId, accountId) => q.getMembership.get(teamId, accountId),
    listMembers: async (teamId) => q.listMembers.all(teamId),
    removeMembership: async (teamId, accountId) => q.removeMembership.run(teamId, accountId).changes > 0,

    async insertKey(key) {
      try {
        q.insertKey.run(key)
      } catch (error) {
        const columns = violatedColumns(error)
        if (columns?.includes('api_keys.scope')) throw new StoreConflict('live_key', key.account_id)
        if (columns?.includes('api_keys.hash')) throw new StoreConflict('hash')
        if (columns) throw new StoreConflict('key_id', key.key_id)
        throw error
      }
    },
    getKey: async (keyId) => q.getKey.get(keyId),
    findKeyByHash: async (hash) => q.findKeyByHash.get(hash),
    findLiveKey: async (accountId, scope: KeyScope) => q.findLiveKey.get(accountId, scope),
    listKeys: async (accountId) => q.listKeys.all(accountId),
    async revokeKey(keyId, at) {
      q.revokeKey.run(at, keyId)
      return q.getKey.get(keyId)
    },
    touchKey: async ({ key_id }, at) => void q.touchKey.run({ key_id, at }),

    async ping() {
      try {
        return db.query('SELECT 1').get() !== null
      } catch {
        return false
      }
    },
    close: async () => db.close(),
  }
}
