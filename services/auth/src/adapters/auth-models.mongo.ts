import { type Connection, type Model, Schema } from 'mongoose'
import type { KeyScope, TeamRole, Tier } from '@lr/proto'

export interface AccountDoc {
  _id: string
  email: string
  tier: Tier
  api_grant_until: number | null
  created_at: number
}
export interface TeamDoc {
  _id: string
  name: string
}
export interface MemberDoc {
  team_id: string
  account_id: string
  role: TeamRole
}
export interface KeyDoc {
  _id: string
  account_id: string
  scope: KeyScope
  /** Absent on keys stored before names existed: read as null. */
  name?: string | null
  team_id: string | null
  hash: string
  last_four: string
  created_at: number
  active_at: number
  revoked_at: number | null
  /**
   * Written here only by keys stored before `auth_key_uses` existed (and by an insert): a key's
   * use is recorded there, so that no write of it ever rewrites this document (KeyUseDoc).
   */
  last_used_at: number | null
  /** true while unrevoked, unset once revoked. */
  live?: true
  /** liveSlot(account, scope) while unrevoked, revokedSlot(id) after: its unique index allows one live key per account and scope. */
  slot: string
  /**
   * The order keys were made in, where created_at (whole seconds) ties: the server's clock in ms,
   * times 1000 plus a count (auth-store.mongo.ts). Absent on keys stored before it: those of one
   * second keep their order by id.
   */
  seq?: number
}

/**
 * When a key was last used, apart from the key: FerretDB v1 applies an update by writing back the
 * whole document it read, so a use recorded on the key's own document while it was revoked undid
 * the revocation (95 of 200 tries in a probe), and the key worked again. Only inserts and a revoke
 * write a key's document now.
 */
export interface KeyUseDoc {
  /** The key's hash: verify reads it alongside the key, in parallel (findKeyByHash). */
  _id: string
  last_used_at: number
}

/**
 * The slot of an unrevoked key. One unique index on an always-set field stands in for a partial
 * unique index, which FerretDB v1 does not implement (README "MongoDB compatibility").
 */
export const liveSlot = (accountId: string, scope: KeyScope) => JSON.stringify(['live', accountId, scope])
/** The slot of a revoked key: its own, so revoked keys never clash. */
export const revokedSlot = (keyId: string) => JSON.stringify(['revoked', keyId])

const options = { versionKey: false as const }
const nullableNumber = { type: Number, default: null }

const accounts = new Schema<AccountDoc>(
  { _id: String, email: { type: String, required: true }, tier: { type: String, required: true }, api_grant_until: nullableNumber, created_at: { type: Number, required: true } },
  { ...options, collection: 'auth_accounts' },
)
accounts.index({ email: 1 }, { unique: true })

const teams = new Schema<TeamDoc>({ _id: String, name: { type: String, required: true } }, { ...options, collection: 'auth_teams' })
teams.index({ name: 1 })

const members = new Schema<MemberDoc>(
  { team_id: { type: String, required: true }, account_id: { type: String, required: true }, role: { type: String, required: true } },
  { ...options, collection: 'auth_memberships' },
)
members.index({ team_id: 1, account_id: 1 }, { unique: true })

const keys = new Schema<KeyDoc>(
  {
    _id: String,
    account_id: { type: String, required: true },
    scope: { type: String, required: true },
    name: { type: String, default: null },
    team_id: { type: String, default: null },
    hash: { type: String, required: true },
    last_four: { type: String, required: true },
    created_at: { type: Number, required: true },
    active_at: { type: Number, required: true },
    revoked_at: nullableNumber,
    last_used_at: nullableNumber,
    live: { type: Boolean },
    slot: { type: String, required: true },
    seq: { type: Number },
  },
  { ...options, collection: 'auth_keys' },
)
keys.index({ hash: 1 }, { unique: true })
keys.index({ slot: 1 }, { unique: true })
keys.index({ account_id: 1, created_at: 1 })

const keyUses = new Schema<KeyUseDoc>({ _id: String, last_used_at: { type: Number, required: true } }, { ...options, collection: 'auth_key_uses' })

function model<T>(conn: Connection, name: string, schema: Schema<T>): Model<T> {
  return (conn.models[name] as Model<T> | undefined) ?? conn.model<T>(name, schema)
}

/** The auth collections on this connection (models are registered once per connection). */
export function authModels(conn: Connection) {
  return {
    Accounts: model(conn, 'AuthAccount', accounts),
    Teams: model(conn, 'AuthTeam', teams),
    Members: model(conn, 'AuthMembership', members),
    Keys: model(conn, 'AuthKey', keys),
    KeyUses: model(conn, 'AuthKeyUse', keyUses),
  }
}
