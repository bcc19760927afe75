import { afterAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAuthStore } from '../../src/adapters/auth-store.sqlite'
import { createAuthService, epochSeconds } from '../../src/service'
import { runCli } from './run-cli'

const dataDir = mkdtempSync(join(tmpdir(), 'lr-auth-cli-'))
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
const admin = (...args: string[]) => runCli(args, { DATA_DIR: dataDir })

// One deployment walked through in order: each step uses what the previous ones created.
describe('bun run admin, the whole flow on the embedded store', () => {
  const ids: Record<string, string> = {}
  const secrets: Record<string, string> = {}

  it('creates a business account and prints it as one JSON object', async () => {
    const r = await admin('account', 'create', '--email', 'boss@example.com', '--tier', 'business')
    ids.boss = r.out.account_id
    expect([r.code, r.stderr, r.stdout.trim().split('\n').length]).toEqual([0, '', 1])
    expect(r.out).toEqual({ account_id: ids.boss, email: 'boss@example.com', tier: 'business', api_grant_until: null, created_at: expect.any(Number) })
    expect(ids.boss).toMatch(/^acct_/)
  })

  it('creates a pro and a basic account', async () => {
    ids.writer = (await admin('account', 'create', '--email', 'writer@example.com', '--tier', 'pro')).out.account_id
    ids.basic = (await admin('account', 'create', '--email=basic@example.com', '--tier=basic')).out.account_id
    expect([ids.writer, ids.basic]).toEqual([expect.stringMatching(/^acct_/), expect.stringMatching(/^acct_/)])
  })

  it('refuses a key to a basic account with exit 1 and {"error"} on stderr', async () => {
    const r = await admin('key', 'create', '--account', ids.basic!, '--scope', 'personal')
    expect([r.code, r.stdout]).toEqual([1, ''])
    expect(r.err.error).toContain('has no API access and cannot create a key')
  })

  it('sets and clears a temporary grant', async () => {
    const set = await admin('account', 'update', '--account', ids.basic!, '--api-grant-until', '4102444800')
    expect([set.code, set.out.api_grant_until]).toEqual([0, 4102444800])
    const cleared = await admin('account', 'update', '--account', ids.basic!, '--api-grant-until', 'none')
    expect([cleared.code, cleared.out.api_grant_until]).toEqual([0, null])
  })

  it('creates a team with a business admin', async () => {
    const r = await admin('team', 'create', '--name', 'Branch library', '--admin', ids.boss!)
    ids.team = r.out.team_id
    expect([r.code, r.out]).toEqual([0, { team_id: expect.stringMatching(/^team_/), name: 'Branch library' }])
  })

  it('adds a writer to the team and prints the membership', async () => {
    const r = await admin('team', 'add-member', '--team', ids.team!, '--account', ids.writer!, '--role', 'writer')
    expect([r.code, r.out]).toEqual([0, { team_id: ids.team, account_id: ids.writer, role: 'writer' }])
  })

  it('creates a personal key shown once with its prefix', async () => {
    const r = await admin('key', 'create', '--account', ids.writer!, '--scope', 'personal')
    secrets.personal = r.out.key
    expect(r.code).toBe(0)
    expect(r.out).toEqual({ key_id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^lrp_[0-9A-Za-z]{32}$/), scope: 'personal', team_id: null, created_at: expect.any(Number), active_at: r.out.created_at })
  })

  it('creates a business key for the team', async () => {
    const r = await admin('key', 'create', '--account', ids.writer!, '--scope', 'business', '--team', ids.team!)
    ids.businessKey = r.out.key_id
    secrets.business = r.out.key
    expect([r.code, r.out.team_id, r.out.key]).toEqual([0, ids.team, expect.stringMatching(/^lrb_/)])
  })

  it('refuses a second personal key while the first is unrevoked', async () => {
    const r = await admin('key', 'create', '--account', ids.writer!, '--scope', 'personal')
    expect(r.code).toBe(1)
    expect(r.err.error).toContain('already has an unrevoked personal key')
  })

  it('lists the keys without their secrets', async () => {
    const r = await admin('key', 'list', '--account', ids.writer!)
    expect(r.code).toBe(0)
    expect(r.out.keys.map((k: { scope: string }) => k.scope)).toEqual(['personal', 'business'])
    expect(Object.keys(r.out.keys[0]).sort()).toEqual(['active_at', 'created_at', 'key_id', 'last_four', 'last_used_at', 'revoked_at', 'scope', 'team_id'])
    expect(r.stdout).not.toContain(secrets.personal!.slice(4))
  })

  it('writes the store a running deployment reads: the new key verifies there', async () => {
    const store = createSqliteAuthStore(openSqlite(join(dataDir, 'auth.sqlite')))
    const service = createAuthService({ store, now: epochSeconds, activationDelayS: 0 })
    expect(await service.verify(secrets.business)).toMatchObject({ account_id: ids.writer, scope: 'business', team_id: ids.team, role: 'writer' })
    await store.close()
  })

  it('refuses a revoke --by an account that is neither owner nor team admin', async () => {
    const r = await admin('key', 'revoke', '--key-id', ids.businessKey!, '--by', ids.basic!)
    expect([r.code, r.err.error]).toEqual([1, `account ${ids.basic} may not revoke key ${ids.businessKey}: only its owner or an admin of its team can`])
  })

  it('lets the team admin revoke the business key', async () => {
    const r = await admin('key', 'revoke', '--key-id', ids.businessKey!, '--by', ids.boss!)
    expect([r.code, r.out]).toEqual([0, { key_id: ids.businessKey, revoked_at: expect.any(Number) }])
  })

  it('removes the member from the team', async () => {
    const r = await admin('team', 'remove-member', '--team', ids.team!, '--account', ids.writer!)
    expect([r.code, r.out]).toEqual([0, { team_id: ids.team, account_id: ids.writer, removed: true }])
  })
})

describe('bun run admin, a bad command line', () => {
  it('exits 1 with {"error"} naming the unknown command', async () => {
    const r = await admin('key', 'destroy', '--key-id', 'key_x')
    expect([r.code, r.stdout]).toEqual([1, ''])
    expect(r.err.error).toStartWith('unknown command "key destroy"')
  })

  it('exits 1 naming a missing flag', async () => {
    const r = await admin('account', 'create', '--email', 'x@example.com')
    expect([r.code, r.err]).toEqual([1, { error: 'missing --tier' }])
  })

  it('exits 1 naming the allowed values of a bad one', async () => {
    const r = await admin('account', 'create', '--email', 'x@example.com', '--tier', 'gold')
    expect([r.code, r.err]).toEqual([1, { error: '--tier must be one of basic, advanced, pro, business' }])
  })
})
