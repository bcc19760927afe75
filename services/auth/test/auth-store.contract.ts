import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import type { Account } from '@lr/proto'
import type { AuthStore, StoredKey } from '../src/ports'
import { conflict } from './rejection'

const account = (n: number, over: Partial<Account> = {}): Account => ({
  account_id: `acct_${n}`, email: `user${n}@example.com`, tier: 'pro', api_grant_until: null, created_at: 1000 + n, ...over,
})
const key = (n: number, over: Partial<StoredKey> = {}): StoredKey => ({
  key_id: `key_${n}`, account_id: 'acct_1', scope: 'personal', name: null, team_id: null, hash: `hash_${n}`, last_four: 'abcd',
  created_at: 2000 + n, active_at: 2000 + n, revoked_at: null, last_used_at: null, ...over,
})

/** The behaviour every AuthStore adapter must share; run once per adapter. */
export function authStoreContract(name: string, makeStore: () => Promise<AuthStore>) {
  describe(`AuthStore contract: ${name}`, () => {
    let store: AuthStore
    beforeEach(async () => {
      store = await makeStore()
      await store.insertAccount(account(1))
      await store.insertAccount(account(2))
      await store.insertTeam({ team_id: 'team_1', name: 'Team one' }, 'acct_2')
    })
    afterEach(() => store.close())

    it('returns null for an account, team or key that does not exist', async () => {
      expect(await store.getAccount('acct_none')).toBeNull()
      expect(await store.getTeam('team_none')).toBeNull()
      expect(await store.getKey('key_none')).toBeNull()
      expect(await store.findKeyByHash('hash_none')).toBeNull()
    })

    it('returns an account as it was inserted', async () => {
      expect(await store.getAccount('acct_1')).toEqual(account(1))
    })

    it('refuses a second account with the same email as a conflict on email', async () => {
      const error = await conflict(store.insertAccount(account(3, { email: 'user1@example.com' })))
      expect([error.key, error.value]).toEqual(['email', 'user1@example.com'])
    })

    it('refuses an account or team id already taken as a conflict on the id', async () => {
      expect((await conflict(store.insertAccount(account(1, { email: 'other@example.com' })))).key).toBe('account_id')
      expect((await conflict(store.insertTeam({ team_id: 'team_1', name: 'Again' }, 'acct_1'))).key).toBe('team_id')
      // The refused team's admin is not made a member of the team that has the id.
      expect(await store.listMembers('team_1')).toEqual([{ team_id: 'team_1', account_id: 'acct_2', role: 'admin' }])
      expect(await conflict(store.insertTeam({ team_id: 'team_1', name: 'Again' }, 'acct_2'))).toBeDefined()
      expect(await store.listMembers('team_1')).toEqual([{ team_id: 'team_1', account_id: 'acct_2', role: 'admin' }])
    })

    it('updates only the given account fields and returns the account', async () => {
      expect(await store.updateAccount('acct_1', { api_grant_until: 5000 })).toEqual(account(1, { api_grant_until: 5000 }))
      expect(await store.updateAccount('acct_1', { tier: 'basic' })).toEqual(account(1, { tier: 'basic', api_grant_until: 5000 }))
      expect(await store.updateAccount('acct_1', { api_grant_until: null })).toEqual(account(1, { tier: 'basic' }))
    })

    it('returns null when updating an account that does not exist', async () => {
      expect(await store.updateAccount('acct_none', { tier: 'basic' })).toBeNull()
    })

    it('returns a team as it was inserted, its admin a member', async () => {
      expect(await store.getTeam('team_1')).toEqual({ team_id: 'team_1', name: 'Team one' })
      expect(await store.listMembers('team_1')).toEqual([{ team_id: 'team_1', account_id: 'acct_2', role: 'admin' }])
    })

    it('keeps one membership per team and account, the last role put winning', async () => {
      await store.putMembership({ team_id: 'team_1', account_id: 'acct_1', role: 'writer' })
      await store.putMembership({ team_id: 'team_1', account_id: 'acct_1', role: 'viewer' })
      expect(await store.getMembership('team_1', 'acct_1')).toEqual({ team_id: 'team_1', account_id: 'acct_1', role: 'viewer' })
      expect((await store.listMembers('team_1')).filter((m) => m.account_id === 'acct_1')).toEqual([{ team_id: 'team_1', account_id: 'acct_1', role: 'viewer' }])
    })

    it('lists the members of a team by account id', async () => {
      await store.putMembership({ team_id: 'team_1', account_id: 'acct_2', role: 'admin' })
      await store.putMembership({ team_id: 'team_1', account_id: 'acct_1', role: 'writer' })
      expect((await store.listMembers('team_1')).map((m) => m.account_id)).toEqual(['acct_1', 'acct_2'])
    })

    it('removes a membership once and then reports there was none', async () => {
      await store.putMembership({ team_id: 'team_1', account_id: 'acct_1', role: 'writer' })
      expect(await store.removeMembership('team_1', 'acct_1')).toBe(true)
      expect(await store.removeMembership('team_1', 'acct_1')).toBe(false)
      expect(await store.getMembership('team_1', 'acct_1')).toBeNull()
    })

    it('finds a key by id and by hash as it was inserted', async () => {
      await store.insertKey(key(1, { scope: 'business', team_id: 'team_1' }))
      expect(await store.getKey('key_1')).toEqual(key(1, { scope: 'business', team_id: 'team_1' }))
      expect(await store.findKeyByHash('hash_1')).toEqual(key(1, { scope: 'business', team_id: 'team_1' }))
    })

    it('refuses a second unrevoked key of the same account and scope as a conflict on live_key', async () => {
      await store.insertKey(key(1))
      const error = await conflict(store.insertKey(key(2)))
      expect([error.key, error.value]).toEqual(['live_key', 'acct_1'])
    })

    it('refuses a key whose id or secret is taken as a conflict on key_id or hash', async () => {
      await store.insertKey(key(1))
      expect((await conflict(store.insertKey(key(1, { scope: 'business', team_id: 'team_1', hash: 'hash_9' })))).key).toBe('key_id')
      expect((await conflict(store.insertKey(key(2, { scope: 'business', team_id: 'team_1', hash: 'hash_1' })))).key).toBe('hash')
    })

    it('lets exactly one of two racing inserts of the same scope succeed', async () => {
      const results = await Promise.allSettled([store.insertKey(key(1)), store.insertKey(key(2))])
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    })

    it('accepts a key of the other scope or of another account', async () => {
      await store.insertKey(key(1))
      await store.insertKey(key(2, { scope: 'business', team_id: 'team_1' }))
      await store.insertKey(key(3, { account_id: 'acct_2' }))
      expect((await store.listKeys('acct_1')).map((k) => k.key_id)).toEqual(['key_1', 'key_2'])
    })

    it('accepts a new key of a scope once the old one is revoked', async () => {
      await store.insertKey(key(1))
      await store.revokeKey('key_1', 3000)
      await store.insertKey(key(2))
      expect((await store.findLiveKey('acct_1', 'personal'))?.key_id).toBe('key_2')
    })

    it('finds the live key of a scope, and none after it is revoked', async () => {
      await store.insertKey(key(1))
      expect(await store.findLiveKey('acct_1', 'personal')).toEqual(key(1))
      expect(await store.findLiveKey('acct_1', 'business')).toBeNull()
      await store.revokeKey('key_1', 3000)
      expect(await store.findLiveKey('acct_1', 'personal')).toBeNull()
    })

    it('keeps the first revocation time when a key is revoked twice', async () => {
      await store.insertKey(key(1))
      expect(await store.revokeKey('key_1', 3000)).toEqual(key(1, { revoked_at: 3000 }))
      expect(await store.revokeKey('key_1', 4000)).toEqual(key(1, { revoked_at: 3000 }))
    })

    it('lists keys made in one second in the order they were made (a key rotated by a script: revoke, then create)', async () => {
      // Ids sort against the order made: the store may not break the tie by id.
      await store.insertKey(key(9, { created_at: 3000, active_at: 3000 }))
      await store.revokeKey('key_9', 3000)
      await store.insertKey(key(8, { created_at: 3000, active_at: 3000 }))
      await store.revokeKey('key_8', 3000)
      await store.insertKey(key(7, { created_at: 3000, active_at: 3000 }))
      expect((await store.listKeys('acct_1')).map((k) => k.key_id)).toEqual(['key_9', 'key_8', 'key_7'])
    })

    it('returns null when revoking a key that does not exist', async () => {
      expect(await store.revokeKey('key_none', 3000)).toBeNull()
    })

    it('lists the keys of an account oldest first, revoked ones included', async () => {
      await store.insertKey(key(2, { created_at: 2500 }))
      await store.revokeKey('key_2', 2600)
      await store.insertKey(key(1, { created_at: 2100 }))
      expect((await store.listKeys('acct_1')).map((k) => [k.key_id, k.revoked_at])).toEqual([['key_1', null], ['key_2', 2600]])
      expect(await store.listKeys('acct_2')).toEqual([])
    })

    it('records the last use of a key and never moves it backwards', async () => {
      await store.insertKey(key(1))
      await store.touchKey(key(1), 3000)
      await store.touchKey(key(1), 2900)
      expect((await store.getKey('key_1'))?.last_used_at).toBe(3000)
    })

    it('keeps a key\'s name, and lists it', async () => {
      await store.insertKey(key(1, { name: 'CI \u{1F680}' }))
      expect(await store.getKey('key_1')).toEqual(key(1, { name: 'CI \u{1F680}' }))
      expect((await store.listKeys('acct_1')).map((k) => k.name)).toEqual(['CI \u{1F680}'])
    })

    it('finds an account by its email, or null', async () => {
      expect(await store.findAccountByEmail('user2@example.com')).toEqual(account(2))
      expect(await store.findAccountByEmail('nobody@example.com')).toBeNull()
    })

    it('lists accounts by email, a page at a time after the last email seen', async () => {
      await store.insertAccount(account(3, { email: 'a3@example.com' }))
      expect((await store.listAccounts(null, 2)).map((a) => a.email)).toEqual(['a3@example.com', 'user1@example.com'])
      expect(await store.listAccounts('user1@example.com', 2)).toEqual([account(2)])
      expect(await store.listAccounts('user2@example.com', 2)).toEqual([])
    })

    it('finds every team with a name, by id', async () => {
      await store.insertTeam({ team_id: 'team_3', name: 'Shared' }, 'acct_1')
      await store.insertTeam({ team_id: 'team_2', name: 'Shared' }, 'acct_1')
      expect(await store.findTeamsByName('Shared')).toEqual([{ team_id: 'team_2', name: 'Shared' }, { team_id: 'team_3', name: 'Shared' }])
      expect(await store.findTeamsByName('Team one')).toEqual([{ team_id: 'team_1', name: 'Team one' }])
      expect(await store.findTeamsByName('None')).toEqual([])
    })

    it('answers a ping while open', async () => {
      expect(await store.ping()).toBe(true)
    })
  })
}
