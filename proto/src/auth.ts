import { type Static, Type as T } from '@sinclair/typebox'

/** Subjects of services/auth; queue group `auth`. */
export const AUTH_SUBJECTS = {
  /** {key} -> Principal, or 403 (missing / unknown / revoked / not yet active / no API access). */
  verify: 'auth.v1.verify',
  accountCreate: 'auth.v1.account.create',
  accountUpdate: 'auth.v1.account.update',
  teamCreate: 'auth.v1.team.create',
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
export const AccountUpdateRequest = T.Object({
  account_id: Id,
  tier: T.Optional(Tier),
  api_grant_until: T.Optional(T.Union([Epoch, T.Null()])),
})

export const Team = T.Object({ team_id: T.String(), name: T.String() })
export type Team = Static<typeof Team>
export const TeamCreateRequest = T.Object({ name: T.String({ minLength: 1, maxLength: 200 }), admin: Id })
export const TeamMemberRequest = T.Object({ team_id: Id, account_id: Id, role: TeamRole })
export const TeamRemoveMemberRequest = T.Object({ team_id: Id, account_id: Id })
export const Membership = T.Object({ team_id: T.String(), account_id: T.String(), role: TeamRole })
export type Membership = Static<typeof Membership>

export const KeyCreateRequest = T.Object({ account_id: Id, scope: KeyScope, team_id: T.Optional(Id) })
/** The one answer that holds the secret; it is never shown again. */
export const CreatedKey = T.Object({
  key_id: T.String(),
  key: T.String(),
  scope: KeyScope,
  team_id: T.Union([T.String(), T.Null()]),
  created_at: Epoch,
  active_at: Epoch,
})
export type CreatedKey = Static<typeof CreatedKey>
export const KeyRevokeRequest = T.Object({ key_id: Id, by: T.Optional(Id) })
export const KeyListRequest = T.Object({ account_id: Id })
export const KeyInfo = T.Object({
  key_id: T.String(),
  scope: KeyScope,
  team_id: T.Union([T.String(), T.Null()]),
  last_four: T.String(),
  created_at: Epoch,
  active_at: Epoch,
  revoked_at: T.Union([Epoch, T.Null()]),
  last_used_at: T.Union([Epoch, T.Null()]),
})
export type KeyInfo = Static<typeof KeyInfo>
