import { AppError, controlCharacterProblem, type MemberRemoved, type Membership, type Team, type TeamCreateRequest, type TeamDetails, type TeamMemberRequest, type TeamRemoveMemberRequest, type TeamShowRequest } from '@lr/proto'
import type { AuthStore } from '../ports'
import type { AuthDeps } from '../ports'
import { newId } from '../secret'
import { answeringConflicts, duplicateId } from '../conflicts'
import { requireAccount, requireTeam } from './lookups'

export async function createTeam({ store }: AuthDeps, req: TeamCreateRequest): Promise<Team> {
  const name = req.name.trim()
  if (!name) throw new AppError('bad_request', 'team name must not be blank')
  const problem = controlCharacterProblem('team name', name)
  if (problem) throw new AppError('bad_request', problem)
  const admin = await requireAccount(store, req.admin)
  if (admin.tier !== 'business')
    throw new AppError('forbidden', `account ${admin.account_id} has tier ${admin.tier}: only a business account can create a team`)
  const team: Team = { team_id: newId('team'), name }
  await answeringConflicts(store.insertTeam(team, admin.account_id), { team_id: () => duplicateId('team', team.team_id) })
  return team
}

/** Adds the account, or changes its role when it is already a member. */
export async function addMember({ store }: AuthDeps, req: TeamMemberRequest): Promise<Membership> {
  await requireTeam(store, req.team_id)
  await requireAccount(store, req.account_id)
  const current = await store.getMembership(req.team_id, req.account_id)
  const demoted = current?.role === 'admin' && req.role !== 'admin'
  if (demoted) await keepAnAdmin(store, req.team_id, req.account_id)
  const membership: Membership = { team_id: req.team_id, account_id: req.account_id, role: req.role }
  await store.putMembership(membership)
  if (demoted) await stillAnAdmin(store, req.team_id, req.account_id, () => store.putMembership(current))
  return membership
}

/**
 * Takes the account out of the team and revokes its business key of that team: removal is how a
 * member leaves, and a key that only the missing membership held back would work again the day
 * the account is added back (a demotion to viewer keeps the key: a promotion restores it). Revoked
 * after the removal, so a refused removal (the last admin) keeps its key; a crash in between leaves
 * a key that verify refuses while the account is out of the team, as it always did.
 */
export async function removeMember({ store, now }: AuthDeps, req: TeamRemoveMemberRequest): Promise<MemberRemoved> {
  await requireTeam(store, req.team_id)
  const notMember = () => new AppError('not_found', `account ${req.account_id} is not a member of team ${req.team_id}`)
  const current = await store.getMembership(req.team_id, req.account_id)
  if (!current) throw notMember()
  if (current.role === 'admin') await keepAnAdmin(store, req.team_id, req.account_id)
  if (!(await store.removeMembership(req.team_id, req.account_id))) throw notMember()
  if (current.role === 'admin') await stillAnAdmin(store, req.team_id, req.account_id, () => store.putMembership(current))
  const key = await store.findLiveKey(req.account_id, 'business')
  const revoked = key?.team_id === req.team_id ? await store.revokeKey(key.key_id, now()) : null
  return { team_id: req.team_id, account_id: req.account_id, removed: true, revoked_key_id: revoked?.key_id ?? null }
}

/** A team by id, else by name (one team must bear it), with its members and their emails. */
export async function showTeam({ store }: AuthDeps, req: TeamShowRequest): Promise<TeamDetails> {
  let team = await store.getTeam(req.team)
  if (!team) {
    const named = await store.findTeamsByName(req.team.trim())
    if (named.length === 0) throw new AppError('not_found', `no team with id or name ${JSON.stringify(req.team)}`)
    if (named.length > 1)
      throw new AppError('bad_request', `${named.length} teams are named ${JSON.stringify(req.team)}: ${named.map((t) => t.team_id).join(', ')}; give the team id`)
    team = named[0]!
  }
  const { team_id, name } = team
  const members = await Promise.all(
    (await store.listMembers(team_id)).map(async ({ account_id, role }) => {
      const account = await store.getAccount(account_id)
      // Accounts are never deleted: a membership without its account is a broken store, not an empty email.
      if (!account) throw new AppError('internal', `team ${team_id} has a member ${account_id} whose account does not exist`)
      return { account_id, email: account.email, role }
    }),
  )
  return { team_id, name, members }
}

const lastAdmin = (leaving: string, teamId: string) =>
  new AppError('bad_request', `account ${leaving} is the last admin of team ${teamId}: make another member admin first`)

// A team without an admin could no longer approve drafts or revoke a teammate's key.
async function keepAnAdmin(store: AuthStore, teamId: string, leaving: string) {
  const others = (await store.listMembers(teamId)).filter((m) => m.role === 'admin' && m.account_id !== leaving)
  if (others.length === 0) throw lastAdmin(leaving, teamId)
}

/**
 * The same rule after the write, which no store makes atomic with the check (MongoDB without
 * transactions): two admins demoting or removing each other at once both passed keepAnAdmin and
 * left the team with none. Each looks again after its own write and undoes it when no admin is
 * left, so the last of them to write always sees both writes. At worst both undo (both refused,
 * retry); never does the team end without an admin, short of a crash between write and undo.
 */
async function stillAnAdmin(store: AuthStore, teamId: string, leaving: string, undo: () => Promise<unknown>) {
  if ((await store.listMembers(teamId)).some((m) => m.role === 'admin')) return
  await undo()
  throw lastAdmin(leaving, teamId)
}
