import { describe, expect, it } from 'bun:test'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAuthStore } from '../../src/adapters/auth-store.sqlite'
import { authStoreContract } from '../auth-store.contract'

authStoreContract('sqlite', async () => createSqliteAuthStore(openSqlite(':memory:')))

describe('sqlite adapter, a team and its admin', () => {
  // A write failing (disk full, I/O error, the process dying) after the other went in.
  for (const table of ['teams', 'memberships'])
    it(`writes neither when the write to ${table} fails`, async () => {
      const db = openSqlite(':memory:')
      const store = createSqliteAuthStore(db)
      await store.insertAccount({ account_id: 'acct_1', email: 'a@example.com', tier: 'business', api_grant_until: null, created_at: 1 })
      db.exec(`CREATE TRIGGER fail_${table} AFTER INSERT ON ${table} BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`)
      expect(store.insertTeam({ team_id: 'team_1', name: 'Night shift' }, 'acct_1')).rejects.toThrow('disk I/O error')
      expect([await store.getTeam('team_1'), await store.listMembers('team_1')]).toEqual([null, []])
    })
})

describe('sqlite adapter on a database from before key names', () => {
  it('adds the name column and reads older keys with a null name', async () => {
    const db = openSqlite(':memory:')
    db.exec(`CREATE TABLE accounts (account_id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, tier TEXT NOT NULL, api_grant_until INTEGER, created_at INTEGER NOT NULL);
      CREATE TABLE teams (team_id TEXT PRIMARY KEY, name TEXT NOT NULL);
      CREATE TABLE api_keys (key_id TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts, scope TEXT NOT NULL,
        team_id TEXT REFERENCES teams, hash TEXT NOT NULL UNIQUE, last_four TEXT NOT NULL,
        created_at INTEGER NOT NULL, active_at INTEGER NOT NULL, revoked_at INTEGER, last_used_at INTEGER);
      INSERT INTO accounts VALUES ('acct_1', 'a@example.com', 'pro', NULL, 1);
      INSERT INTO api_keys VALUES ('key_old', 'acct_1', 'personal', NULL, 'h1', 'abcd', 2, 2, NULL, NULL);`)
    const store = createSqliteAuthStore(db)
    expect((await store.getKey('key_old'))?.name).toBeNull()
    await store.revokeKey('key_old', 3)
    await store.insertKey({ key_id: 'key_new', account_id: 'acct_1', scope: 'personal', name: 'CI', team_id: null, hash: 'h2', last_four: 'efgh', created_at: 4, active_at: 4, revoked_at: null, last_used_at: null })
    expect((await store.listKeys('acct_1')).map((k) => k.name)).toEqual([null, 'CI'])
  })
})
