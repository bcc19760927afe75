import { describe, expect, it } from 'bun:test'
import { createHash } from 'node:crypto'
import { rejection, T0, world } from '../fixtures'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

describe('key create', () => {
  it('issues a personal key as lrp_ and 32 base62 characters (about 190 random bits)', async () => {
    const w = world()
    const a = await w.account('pro')
    const created = await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })
    expect(created.key).toMatch(/^lrp_[0-9A-Za-z]{32}$/)
    expect(32 * Math.log2(62)).toBeGreaterThanOrEqual(160)
  })

  it('issues a business key as lrb_ and 32 base62 characters, carrying its team', async () => {
    const w = world()
    const { team_id, admin } = await w.team()
    const created = await w.service.keyCreate({ account_id: admin.account_id, scope: 'business', team_id })
    expect(created.key).toMatch(/^lrb_[0-9A-Za-z]{32}$/)
    expect(created.team_id).toBe(team_id)
  })

  it('never issues the same secret twice', async () => {
    const w = world()
    const secrets = new Set<string>()
    for (let i = 0; i < 20; i++) {
      const a = await w.account('pro')
      secrets.add((await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })).key.slice(4))
    }
    expect(secrets.size).toBe(20)
  })

  it('answers key_id, key, name, scope, team_id, created_at and active_at = now + activation delay', async () => {
    const w = world({ activationDelayS: 120 })
    const a = await w.account('advanced')
    const created = await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })
    expect(created).toEqual({ key_id: expect.stringMatching(/^key_/), key: expect.any(String), name: null, scope: 'personal', team_id: null, created_at: T0, active_at: T0 + 120 })
  })

  it('keeps the name a key is given, trimmed, and shows it in the list', async () => {
    const w = world()
    const a = await w.account('pro')
    const created = await w.service.keyCreate({ account_id: a.account_id, scope: 'personal', name: '  CI deploys \u{1F680} ' })
    expect(created.name).toBe('CI deploys \u{1F680}')
    expect((await w.service.keyList({ account_id: a.account_id })).keys.map((k) => k.name)).toEqual(['CI deploys \u{1F680}'])
  })

  it('refuses a blank, too long or control-character key name with 400 and creates nothing', async () => {
    const w = world()
    const a = await w.account('pro')
    for (const [name, message] of [
      ['  ', 'a key name must be 1 to 100 characters after trimming'],
      ['x'.repeat(101), 'a key name must be 1 to 100 characters after trimming'],
      ['a\tb', 'a key name must hold no control characters (U+0000 to U+001F, U+007F to U+009F: tab, line break, ESC, ...); it has U+0009 at character 2'],
      ['CSI \u009b31m', 'a key name must hold no control characters (U+0000 to U+001F, U+007F to U+009F: tab, line break, ESC, ...); it has U+009B at character 5'],
    ] as [string, string][]) {
      const error = await rejection(w.service.keyCreate({ account_id: a.account_id, scope: 'personal', name }))
      expect([error.status, error.message]).toEqual([400, message])
    }
    expect((await w.service.keyCreate({ account_id: a.account_id, scope: 'personal', name: '\u{1F600}'.repeat(100) })).name).toHaveLength(200)
    expect((await w.service.keyList({ account_id: a.account_id })).keys).toHaveLength(1)
  })

  it('stores only the sha256 of the secret and its last four characters', async () => {
    const w = world()
    const a = await w.account('pro')
    const created = await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })
    const dump = JSON.stringify(w.db.query('SELECT * FROM api_keys').all())
    expect(dump).not.toContain(created.key)
    expect(dump).not.toContain(created.key.slice(4))
    expect(w.db.query('SELECT hash, last_four FROM api_keys').get()).toEqual({ hash: sha256(created.key), last_four: created.key.slice(-4) })
  })

  it('refuses a basic account without a temporary grant', async () => {
    const w = world()
    const a = await w.account('basic')
    const error = await rejection(w.service.keyCreate({ account_id: a.account_id, scope: 'personal' }))
    expect([error.status, error.message]).toEqual([403, `account ${a.account_id} has tier basic and no live temporary grant: it has no API access and cannot create a key`])
  })

  it('refuses a basic account whose temporary grant has expired', async () => {
    const w = world()
    const a = await w.account('basic')
    await w.service.accountUpdate({ account_id: a.account_id, api_grant_until: T0 - 1 })
    const error = await rejection(w.service.keyCreate({ account_id: a.account_id, scope: 'personal' }))
    expect(error.status).toBe(403)
  })

  it('refuses a second unrevoked key of the same scope, naming the key in the way', async () => {
    const w = world()
    const a = await w.account('pro')
    const first = await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })
    const error = await rejection(w.service.keyCreate({ account_id: a.account_id, scope: 'personal' }))
    expect([error.status, error.message]).toEqual([400, `account ${a.account_id} already has an unrevoked personal key (${first.key_id}): revoke it before creating a new one`])
  })

  it('answers two racing creates of the same scope with one key and the same 400 (the store\'s unique index decides)', async () => {
    const w = world()
    const a = await w.account('pro')
    const create = () => w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })
    const results = await Promise.allSettled([create(), create()])
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    const error = await rejection(Promise.reject((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason))
    expect([error.status, error.message]).toEqual([400, `account ${a.account_id} already has an unrevoked personal key: revoke it before creating a new one`])
  })

  it('accepts a new key of the scope once the old one is revoked', async () => {
    const w = world()
    const a = await w.account('pro')
    const first = await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })
    await w.service.keyRevoke({ key_id: first.key_id })
    expect((await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })).key_id).not.toBe(first.key_id)
  })

  it('lets one account hold a personal and a business key at once', async () => {
    const w = world()
    const { team_id, admin } = await w.team()
    await w.service.keyCreate({ account_id: admin.account_id, scope: 'personal' })
    await w.service.keyCreate({ account_id: admin.account_id, scope: 'business', team_id })
    expect((await w.service.keyList({ account_id: admin.account_id })).keys).toHaveLength(2)
  })

  it('refuses a business key to a viewer of the team', async () => {
    const w = world()
    const { team_id } = await w.team()
    const viewer = await w.member(team_id, 'viewer')
    const error = await rejection(w.service.keyCreate({ account_id: viewer.account_id, scope: 'business', team_id }))
    expect([error.status, error.message]).toEqual([403, `account ${viewer.account_id} is not a writer or admin of team ${team_id}: only they can create business keys`])
  })

  it('refuses a business key to an account outside the team', async () => {
    const w = world()
    const { team_id } = await w.team()
    const outsider = await w.account('business')
    const error = await rejection(w.service.keyCreate({ account_id: outsider.account_id, scope: 'business', team_id }))
    expect(error.status).toBe(403)
  })

  it('refuses a business key without a team, and a personal key with one', async () => {
    const w = world()
    const { team_id, admin } = await w.team()
    const noTeam = await rejection(w.service.keyCreate({ account_id: admin.account_id, scope: 'business' }))
    expect([noTeam.status, noTeam.message]).toEqual([400, 'a business key needs the team_id of its shared library'])
    const withTeam = await rejection(w.service.keyCreate({ account_id: admin.account_id, scope: 'personal', team_id }))
    expect([withTeam.status, withTeam.message]).toEqual([400, 'a personal key belongs to no team: leave team_id out'])
  })

  it('answers 404 for an unknown account or team', async () => {
    const w = world()
    const a = await w.account('pro')
    const noAccount = await rejection(w.service.keyCreate({ account_id: 'acct_nobody', scope: 'personal' }))
    expect([noAccount.status, noAccount.message]).toEqual([404, 'account acct_nobody not found'])
    const noTeam = await rejection(w.service.keyCreate({ account_id: a.account_id, scope: 'business', team_id: 'team_none' }))
    expect([noTeam.status, noTeam.message]).toEqual([404, 'team team_none not found'])
  })
})

describe('key list', () => {
  it('lists every key of the account with last four and last use, never the secret or hash', async () => {
    const w = world()
    const a = await w.account('pro')
    const first = await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })
    await w.service.keyRevoke({ key_id: first.key_id })
    w.clock.now = T0 + 10
    const second = await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })
    const { keys } = await w.service.keyList({ account_id: a.account_id })
    expect(keys).toEqual([
      { key_id: first.key_id, name: null, scope: 'personal', team_id: null, last_four: first.key.slice(-4), created_at: T0, active_at: T0, revoked_at: T0, last_used_at: null },
      { key_id: second.key_id, name: null, scope: 'personal', team_id: null, last_four: second.key.slice(-4), created_at: T0 + 10, active_at: T0 + 10, revoked_at: null, last_used_at: null },
    ])
  })

  it('answers 404 for an unknown account', async () => {
    const error = await rejection(world().service.keyList({ account_id: 'acct_nobody' }))
    expect([error.status, error.message]).toEqual([404, 'account acct_nobody not found'])
  })
})
