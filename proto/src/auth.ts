import { type Static, Type as T } from '@sinclair/typebox'
import { LIMIT_DEFAULT, LIMIT_MAX } from './paging'

/** Subjects of services/auth; queue group `auth`. */
export const AUTH_SUBJECTS = {
  /** {key} -> Principal, or 403 (missing / unknown / revoked / not yet active / no API access). */
  verify: 'auth.v1.verify',
  accountCreate: 'auth.v1.account.create',
  accountUpdate: 'auth.v1.account.update',
  /** AccountShowRequest -> Account, or 404. */
  accountShow: 'auth.v1.account.show',
  /** AccountListRequest -> AccountList. */
  accountList: 'auth.v1.account.list',
  teamCreate: 'auth.v1.team.create',
  /** TeamShowRequest -> TeamDetails, or 404 (400 when a name is shared). */
  teamShow: 'auth.v1.team.show',
  teamAddMember: 'auth.v1.team.add-member',
  teamRemoveMember: 'auth.v1.team.remove-member',
  keyCreate: 'auth.v1.key.create',
  keyRevoke: 'auth.v1.key.revoke',
  keyList: 'auth.v1.key.list',
} as const
export const AUTH_QUEUE = 'auth'

export const Tier = T.Union([T.Literal('basic'), T.Literal('advanced'), T.Literal('pro'), T.Literal('business')])
export type Tier = Static<typeof Tier>
export const TeamRole = T.Union([T.Literal('admin'), T.Literal('writer'), T.Literal('viewer')])
export type TeamRole = Static<typeof TeamRole>
export const KeyScope = T.Union([T.Literal('personal'), T.Literal('business')])
export type KeyScope = Static<typeof KeyScope>

const Id = T.String({ minLength: 1, maxLength: 64 })
const Epoch = T.Integer({ minimum: 0 })

export const VerifyRequest = T.Object({ key: T.Union([T.String(), T.Null()]) })
export type VerifyRequest = Static<typeof VerifyRequest>

export const Account = T.Object({
  account_id: T.String(),
  email: T.String(),
  tier: Tier,
  /** Temporary API access for a tier without it, until this epoch second; null when none. */
  api_grant_until: T.Union([Epoch, T.Null()]),
  created_at: Epoch,
})
export type Account = Static<typeof Account>

export const AccountCreateRequest = T.Object({ email: T.String({ minLength: 3, maxLength: 320 }), tier: Tier })
export type AccountCreateRequest = Static<typeof AccountCreateRequest>
/** Changes tier and/or the temporary grant (null clears it). */
export const AccountUpdateRequest = T.Object({
  account_id: Id,
  tier: T.Optional(Tier),
  api_grant_until: T.Optional(T.Union([Epoch, T.Null()])),
})
export type AccountUpdateRequest = Static<typeof AccountUpdateRequest>

/** One account, by email or by id (exactly one of them). */
export const AccountShowRequest = T.Object({ email: T.Optional(T.String({ minLength: 1, maxLength: 320 })), account_id: T.Optional(Id) })
export type AccountShowRequest = Static<typeof AccountShowRequest>
/** A page of every account, by email, paged as the record lists are; `cursor` is a page's `next_cursor`. */
export const AccountListRequest = T.Object({
  limit: T.Optional(T.Integer({ minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT })),
  cursor: T.Optional(T.String({ minLength: 1, maxLength: 320 })),
})
export type AccountListRequest = Static<typeof AccountListRequest>
export const AccountList = T.Object({ accounts: T.Array(Account), next_cursor: T.Union([T.String(), T.Null()]) })
export type AccountList = Static<typeof AccountList>

export const Team = T.Object({ team_id: T.String(), name: T.String() })
export type Team = Static<typeof Team>
/** `admin` (an account of tier business) becomes the team's first admin. */
/** A team's name: 1 to TEAM_NAME_MAX characters after trimming. */
export const TEAM_NAME_MAX = 200
export const TeamCreateRequest = T.Object({ name: T.String({ minLength: 1, maxLength: TEAM_NAME_MAX }), admin: Id })
export type TeamCreateRequest = Static<typeof TeamCreateRequest>
/** Adds the account to the team, or changes its role when it is already a member. */
export const TeamMemberRequest = T.Object({ team_id: Id, account_id: Id, role: TeamRole })
export type TeamMemberRequest = Static<typeof TeamMemberRequest>
export const TeamRemoveMemberRequest = T.Object({ team_id: Id, account_id: Id })
export type TeamRemoveMemberRequest = Static<typeof TeamRemoveMemberRequest>
/** `revoked_key_id`: the member's business key of this team, revoked with the removal; null when it held none. */
export const MemberRemoved = T.Object({ team_id: T.String(), account_id: T.String(), removed: T.Literal(true), revoked_key_id: T.Union([T.String(), T.Null()]) })
export type MemberRemoved = Static<typeof MemberRemoved>
export const Membership = T.Object({ team_id: T.String(), account_id: T.String(), role: TeamRole })
export type Membership = Static<typeof Membership>
/** A team by its id, or by its name when no team has that id. */
export const TeamShowRequest = T.Object({ team: T.String({ minLength: 1, maxLength: 200 }) })
export type TeamShowRequest = Static<typeof TeamShowRequest>
/** A team and its members (by account id), each with the account's email. */
export const TeamDetails = T.Object({
  team_id: T.String(),
  name: T.String(),
  members: T.Array(T.Object({ account_id: T.String(), email: T.String(), role: TeamRole })),
})
export type TeamDetails = Static<typeof TeamDetails>

export const KEY_NAME_MAX = 100
/** A key's label for people ("CI", "Zapier"): 1 to KEY_NAME_MAX characters after trimming; null when none was given. */
export const KeyName = T.Union([T.String(), T.Null()])
/** `team_id` is required for a business key and refused for a personal one; `name` is optional. */
export const KeyCreateRequest = T.Object({ account_id: Id, scope: KeyScope, team_id: T.Optional(Id), name: T.Optional(T.String({ maxLength: 4 * KEY_NAME_MAX })) })
export type KeyCreateRequest = Static<typeof KeyCreateRequest>
/** The one answer that holds the secret; it is never shown again. */
export const CreatedKey = T.Object({
  key_id: T.String(),
  key: T.String(),
  name: KeyName,
  scope: KeyScope,
  team_id: T.Union([T.String(), T.Null()]),
  created_at: Epoch,
  active_at: Epoch,
})
export type CreatedKey = Static<typeof CreatedKey>
/**
 * The key by exactly one of `key_id` and `key`, its secret itself (a leaked key is known by its
 * secret, not its id). `by`: the account asking (the key's owner or an admin of its team); absent: the operator.
 */
export const KeyRevokeRequest = T.Object({ key_id: T.Optional(Id), key: T.Optional(T.String({ minLength: 1, maxLength: 256 })), by: T.Optional(Id) })
export type KeyRevokeRequest = Static<typeof KeyRevokeRequest>
/** `account_id`: whose key it was, so the operator who revoked a leaked key knows whom to tell. */
export const KeyRevoked = T.Object({ key_id: T.String(), account_id: T.String(), revoked_at: Epoch })
export type KeyRevoked = Static<typeof KeyRevoked>
export const KeyListRequest = T.Object({ account_id: Id })
export type KeyListRequest = Static<typeof KeyListRequest>
export const KeyInfo = T.Object({
  key_id: T.String(),
  name: KeyName,
  scope: KeyScope,
  team_id: T.Union([T.String(), T.Null()]),
  last_four: T.String(),
  created_at: Epoch,
  active_at: Epoch,
  revoked_at: T.Union([Epoch, T.Null()]),
  last_used_at: T.Union([Epoch, T.Null()]),
})
export type KeyInfo = Static<typeof KeyInfo>
/** Every key of an account, oldest first, revoked ones included; never the secret. */
export const KeyList = T.Object({ keys: T.Array(KeyInfo) })
export type KeyList = Static<typeof KeyList>
