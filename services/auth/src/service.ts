import type { Account, AccountCreateRequest, AccountList, AccountListRequest, AccountShowRequest, AccountUpdateRequest, CreatedKey, KeyCreateRequest, KeyList, KeyListRequest, KeyRevoked, KeyRevokeRequest, MemberRemoved, Membership, Principal, Team, TeamCreateRequest, TeamDetails, TeamMemberRequest, TeamRemoveMemberRequest, TeamShowRequest } from '@lr/proto'
import type { AuthDeps } from './ports'
import { createAccount, listAccounts, showAccount, updateAccount } from './operations/accounts'
import { addMember, createTeam, removeMember, showTeam } from './operations/teams'
import { createKey, listKeys, revokeKey } from './operations/keys'
import { verifyKey } from './operations/verify'

export type { AuthDeps }

/** The auth domain: every operation throws AppError (forbidden / not_found / bad_request) on refusal. */
export interface AuthService {
  /** The principal of a key, or AppError('forbidden'); reads the store every time (no cache). */
  verify(key: string | null | undefined): Promise<Principal>
  accountCreate(req: AccountCreateRequest): Promise<Account>
  accountUpdate(req: AccountUpdateRequest): Promise<Account>
  accountShow(req: AccountShowRequest): Promise<Account>
  accountList(req: AccountListRequest): Promise<AccountList>
  teamCreate(req: TeamCreateRequest): Promise<Team>
  teamShow(req: TeamShowRequest): Promise<TeamDetails>
  teamAddMember(req: TeamMemberRequest): Promise<Membership>
  teamRemoveMember(req: TeamRemoveMemberRequest): Promise<MemberRemoved>
  keyCreate(req: KeyCreateRequest): Promise<CreatedKey>
  keyRevoke(req: KeyRevokeRequest): Promise<KeyRevoked>
  keyList(req: KeyListRequest): Promise<KeyList>
}

export function createAuthService(deps: AuthDeps): AuthService {
  return {
    verify: (key) => verifyKey(deps, key),
    accountCreate: (req) => createAccount(deps, req),
    accountUpdate: (req) => updateAccount(deps, req),
    accountShow: (req) => showAccount(deps, req),
    accountList: (req) => listAccounts(deps, req),
    teamCreate: (req) => createTeam(deps, req),
    teamShow: (req) => showTeam(deps, req),
    teamAddMember: (req) => addMember(deps, req),
    teamRemoveMember: (req) => removeMember(deps, req),
    keyCreate: (req) => createKey(deps, req),
    keyRevoke: (req) => revokeKey(deps, req),
    keyList: (req) => listKeys(deps, req),
  }
}

/** The wall clock in epoch seconds, for composition roots. */
export const epochSeconds = () => Math.floor(Date.now() / 1000)
