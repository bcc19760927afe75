import type { Account, KeyScope, Membership, Team, Tier } from '@lr/proto'

/** An API key as stored: never the secret, only its sha256 hex `hash` and its last four characters. */
export type StoredKey = {
  key_id: string
  account_id: string
  scope: KeyScope
  /** A label for people, given at creation; null when none was given. */
  name: string | null
  /** The team of a business key; null for a personal key. */
  team_id: string | null
  hash: string
  last_four: string
  created_at: number
  active_at: number
  revoked_at: number | null
  last_used_at: number | null
}

export type AccountChanges = { tier?: Tier; api_grant_until?: number | null }

/**
 * Persistence of accounts, teams, memberships and API keys. Adapters: createSqliteAuthStore,
 * createMongoAuthStore; both pass test/auth-store.contract.ts.
 *
 * Lookups return null (or false) when nothing matches; the service turns that into a named error.
 * Uniqueness is enforced by the store itself (unique indexes), so replicas cannot race past it:
 * a violation throws StoreConflict naming the key (`email`, `account_id`, `team_id`, `live_key`,
 * `key_id`, `hash`), the same for every adapter; the service words it for the client (conflicts.ts).
 */
export interface AuthStore {
  /** Throws StoreConflict('email') when another account has the same email, ('account_id') for a taken id. */
  insertAccount(account: Account): Promise<void>
  /** null when no account has this id. */
  getAccount(accountId: string): Promise<Account | null>
  /** Applies the changes and returns the account as stored afterwards; null when no account has this id. */
  updateAccount(accountId: string, changes: AccountChanges): Promise<Account | null>
  /** null when no account has this email (as stored: trimmed, lower case). */
  findAccountByEmail(email: string): Promise<Account | null>
  /** Up to `limit` accounts by email, ascending, those after `afterEmail` when given. */
  listAccounts(afterEmail: string | null, limit: number): Promise<Account[]>

  /**
   * The team with `adminId` as its admin member: never the team without it (nobody could manage
   * it). Throws StoreConflict('team_id') for a taken id, adding no membership then.
   */
  insertTeam(team: Team, adminId: string): Promise<void>
  /** null when no team has this id. */
  getTeam(teamId: string): Promise<Team | null>
  /** Every team with exactly this name, by id (names are not unique). */
  findTeamsByName(name: string): Promise<Team[]>

  /** Adds the membership, or sets its role when the account is already a member (one per team and account). */
  putMembership(membership: Membership): Promise<void>
  /** null when the account is not a member of the team. */
  getMembership(teamId: string, accountId: string): Promise<Membership | null>
  listMembers(teamId: string): Promise<Membership[]>
  /** false when the account was not a member. */
  removeMembership(teamId: string, accountId: string): Promise<boolean>

  /**
   * Throws StoreConflict('live_key') when the account already holds an unrevoked key of this
   * scope; ('key_id') or ('hash') when another key has the same id or secret.
   */
  insertKey(key: StoredKey): Promise<void>
  /** null when no key has this id. */
  getKey(keyId: string): Promise<StoredKey | null>
  /** null when no key has this hash. */
  findKeyByHash(hash: string): Promise<StoredKey | null>
  /** The account's unrevoked key of this scope; null when it has none. */
  findLiveKey(accountId: string, scope: KeyScope): Promise<StoredKey | null>
  /** Every key of the account, revoked ones included, oldest first. */
  listKeys(accountId: string): Promise<StoredKey[]>
  /**
   * Sets revoked_at to `at` unless the key is already revoked (the first time stays).
   * Returns the key as stored afterwards; null when no key has this id.
   */
  revokeKey(keyId: string, at: number): Promise<StoredKey | null>
  /**
   * Sets last_used_at to `at`; never moves it backwards. Unknown ids are ignored. Given the key as
   * read (its hash too), so a store may keep the use where it reads it with the key's hash.
   */
  touchKey(key: Pick<StoredKey, 'key_id' | 'hash'>, at: number): Promise<void>

  /**
   * Epoch milliseconds every replica sharing this store reads alike, where the store has such a
   * clock: MongoDB's server (platform/src/mongo-clock.ts). A key's activation delay and an
   * account's API grant are judged by it, so every auth replica answers a key alike however their
   * own clocks disagree. Without it (SQLite: one process), this process's clock.
   */
  now?(): number
  /** true while the underlying database answers. */
  ping(): Promise<boolean>
  /** Releases what the adapter owns (the SQLite database); a Mongo connection passed in stays open for its owner. */
  close(): Promise<void>
}

/** What the auth operations run on. */
export interface AuthDeps {
  store: AuthStore
  /** Current time in epoch seconds; injected so tests control activation and grant expiry. */
  now: () => number
  /** KEY_ACTIVATION_DELAY_S: a new key is refused until created_at + this. */
  activationDelayS: number
}
