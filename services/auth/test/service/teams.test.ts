import { describe, expect, it } from 'bun:test'
import { rejection, T0, world } from '../fixtures'

describe('teams', () => {
  it('creates a team whose business-tier creator is its admin', async () => {
    const w = world()
    const admin = await w.account('business')
    const team = await w.service.teamCreate({ name: '  Branch library ', admin: admin.account_id })
    expect(team).toEqual({ team_id: expect.stringMatching(/^team_/), name: 'Branch library' })
    expect(await w.store.getMembership(team.team_id, admin.account_id)).toEqual({ team_id: team.team_id, account_id: admin.account_id, role: 'admin' })
  })

  it('refuses a team whose admin is not on the business tier', async () => {
    const w = world()
    const pro = await w.account('pro')
    const error = await rejection(w.service.teamCreate({ name: 'Team', admin: pro.account_id }))
    expect([error.status, error.message]).toEqual([403, `account ${pro.account_id} has tier pro: only a business account can create a team`])
  })

  it('refuses a blank team name', async () => {
    const w = world()
    const admin = await w.account('business')
    const error = await rejection(w.service.teamCreate({ name: '   ', admin: admin.account_id }))
    expect([error.status, error.message]).toEqual([400, 'team name must not be blank'])
  })

  it('refuses a team name with a control character, naming it, and creates no team', async () => {
    const w = world()
    const admin = await w.account('business')
    const error = await rejection(w.service.teamCreate({ name: 'Branch\nlibrary', admin: admin.account_id }))
    expect([error.status, error.message]).toEqual([400, 'team name must hold no control characters (U+0000 to U+001F, U+007F to U+009F: tab, line break, ESC, ...); it has U+000A at character 7'])
    expect(await w.store.findTeamsByName('Branch\nlibrary')).toEqual([])
  })

  it('answers 404 for a team admin that does not exist', async () => {
    const error = await rejection(world().service.teamCreate({ name: 'Team', admin: 'acct_nobody' }))
    expect([error.status, error.message]).toEqual([404, 'account acct_nobody not found'])
  })

  it('adds a member and answers the membership', async () => {
    const w = world()
    const { team_id } = await w.team()
    const a = await w.account()
    expect(await w.service.teamAddMember({ team_id, account_id: a.account_id, role: 'writer' })).toEqual({ team_id, account_id: a.account_id, role: 'writer' })
  })

  it("changes an existing member's role instead of adding them twice", async () => {
    const w = world()
    const { team_id } = await w.team()
    const a = await w.member(team_id, 'writer')
    await w.service.teamAddMember({ team_id, account_id: a.account_id, role: 'viewer' })
    expect((await w.store.listMembers(team_id)).filter((m) => m.account_id === a.account_id)).toEqual([{ team_id, account_id: a.account_id, role: 'viewer' }])
  })

  it('answers 404 when adding to an unknown team or an unknown account', async () => {
    const w = world()
    const { team_id } = await w.team()
    const noTeam = await rejection(w.service.teamAddMember({ team_id: 'team_none', account_id: 'acct_x', role: 'writer' }))
    expect([noTeam.status, noTeam.message]).toEqual([404, 'team team_none not found'])
    const noAccount = await rejection(w.service.teamAddMember({ team_id, account_id: 'acct_nobody', role: 'writer' }))
    expect([noAccount.status, noAccount.message]).toEqual([404, 'account acct_nobody not found'])
  })

  it('removes a member and answers removed: true', async () => {
    const w = world()
    const { team_id } = await w.team()
    const a = await w.member(team_id, 'writer')
    expect(await w.service.teamRemoveMember({ team_id, account_id: a.account_id })).toEqual({ team_id, account_id: a.account_id, removed: true, revoked_key_id: null })
    expect(await w.store.getMembership(team_id, a.account_id)).toBeNull()
  })

  it("revokes the removed member's business key of the team, so adding the account back does not bring the key back", async () => {
    const w = world()
    const { team_id } = await w.team()
    const other = await w.team()
    const a = await w.member(team_id, 'writer')
    await w.service.teamAddMember({ team_id: other.team_id, account_id: a.account_id, role: 'writer' })
    const key = await w.service.keyCreate({ account_id: a.account_id, scope: 'business', team_id })
    const personal = await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })
    w.clock.now = T0 + 7
    // Removal from another team leaves the key alone.
    expect((await w.service.teamRemoveMember({ team_id: other.team_id, account_id: a.account_id })).revoked_key_id).toBeNull()
    expect((await w.service.verify(key.key)).team_id).toBe(team_id)
    expect(await w.service.teamRemoveMember({ team_id, account_id: a.account_id })).toEqual({ team_id, account_id: a.account_id, removed: true, revoked_key_id: key.key_id })
    await w.service.teamAddMember({ team_id, account_id: a.account_id, role: 'writer' })
    const error = await rejection(w.service.verify(key.key))
    expect([error.status, error.message]).toEqual([403, expect.stringContaining('revoked')])
    expect((await w.store.getKey(key.key_id))!.revoked_at).toBe(T0 + 7)
    expect((await w.service.verify(personal.key)).scope).toBe('personal')
    // Back in the team, the account makes a new key.
    expect((await w.service.keyCreate({ account_id: a.account_id, scope: 'business', team_id })).team_id).toBe(team_id)
  })

  it("keeps the last admin's key when its removal is refused", async () => {
    const w = world()
    const { team_id, admin } = await w.team()
    const key = await w.service.keyCreate({ account_id: admin.account_id, scope: 'business', team_id })
    expect((await rejection(w.service.teamRemoveMember({ team_id, account_id: admin.account_id }))).status).toBe(400)
    expect((await w.service.verify(key.key)).role).toBe('admin')
  })

  it('answers 404 when removing an account that is not a member', async () => {
    const w = world()
    const { team_id } = await w.team()
    const a = await w.account()
    const error = await rejection(w.service.teamRemoveMember({ team_id, account_id: a.account_id }))
    expect([error.status, error.message]).toEqual([404, `account ${a.account_id} is not a member of team ${team_id}`])
  })

  it('refuses to remove or demote the last admin of a team', async () => {
    const w = world()
    const { team_id, admin } = await w.team()
    const message = `account ${admin.account_id} is the last admin of team ${team_id}: make another member admin first`
    const removal = await rejection(w.service.teamRemoveMember({ team_id, account_id: admin.account_id }))
    expect([removal.status, removal.message]).toEqual([400, message])
    const demotion = await rejection(w.service.teamAddMember({ team_id, account_id: admin.account_id, role: 'writer' }))
    expect([demotion.status, demotion.message]).toEqual([400, message])
  })

  it('never leaves a team without an admin when its two admins are demoted and removed at once', async () => {
    for (const [first, second] of [['demote', 'remove'], ['demote', 'demote'], ['remove', 'remove']] as const) {
      const w = world()
      const { team_id, admin } = await w.team()
      const other = await w.member(team_id, 'admin')
      const change = (how: 'demote' | 'remove', account_id: string) =>
        how === 'demote' ? w.service.teamAddMember({ team_id, account_id, role: 'writer' }) : w.service.teamRemoveMember({ team_id, account_id })
      const outcomes = await Promise.allSettled([change(first, admin.account_id), change(second, other.account_id)])
      const members = (await w.service.teamShow({ team: team_id })).members
      expect(members.filter((m) => m.role === 'admin').length, `${first} + ${second}`).toBeGreaterThanOrEqual(1)
      for (const outcome of outcomes)
        if (outcome.status === 'rejected') expect((outcome.reason as Error).message).toContain('is the last admin of team')
    }
  })

  it('lets an admin leave once another member is admin', async () => {
    const w = world()
    const { team_id, admin } = await w.team()
    await w.member(team_id, 'admin')
    expect((await w.service.teamRemoveMember({ team_id, account_id: admin.account_id })).removed).toBe(true)
  })
})

describe('team show', () => {
  it('shows a team by id or by name, with its members and their emails', async () => {
    const w = world()
    const { team_id, admin } = await w.team()
    const writer = await w.member(team_id, 'writer')
    const expected = {
      team_id,
      name: 'Library team',
      members: [
        { account_id: admin.account_id, email: admin.email, role: 'admin' as const },
        { account_id: writer.account_id, email: writer.email, role: 'writer' as const },
      ].sort((a, b) => (a.account_id < b.account_id ? -1 : 1)), // the stores' order: by account_id, binary
    }
    expect(await w.service.teamShow({ team: team_id })).toEqual(expected)
    expect(await w.service.teamShow({ team: 'Library team' })).toEqual(expected)
  })

  it('answers 404 for an unknown team and 400 naming the ids when a name is shared', async () => {
    const w = world()
    const [one, two] = [await w.team(), await w.team()]
    const missing = await rejection(w.service.teamShow({ team: 'Nobody' }))
    expect([missing.status, missing.message]).toEqual([404, 'no team with id or name "Nobody"'])
    const shared = await rejection(w.service.teamShow({ team: 'Library team' }))
    const ids = [one.team_id, two.team_id].sort().join(', ')
    expect([shared.status, shared.message]).toEqual([400, `2 teams are named "Library team": ${ids}; give the team id`])
  })

  it('answers an internal error, not an empty email, for a membership whose account does not exist', async () => {
    const w = world()
    const { team_id } = await w.team()
    // SQLite's foreign key refuses such a row; MongoDB has none. Turned off here to break the store on purpose.
    w.db.exec('PRAGMA foreign_keys = OFF')
    await w.store.putMembership({ team_id, account_id: 'acct_gone', role: 'viewer' })
    const error = await rejection(w.service.teamShow({ team: team_id }))
    expect([error.status, error.message]).toEqual([500, `team ${team_id} has a member acct_gone whose account does not exist`])
  })
})
