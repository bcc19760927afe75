import { afterAll, describe, expect, it } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAuthStore } from '../../src/adapters/auth-store.sqlite'
import { createAuthService, epochSeconds } from '../../src/service'
import { freePort } from '../../../../test/harness/ports'
import { ROOT, runCli } from './run-cli'

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
    // The first command made the database: one notice line on stderr (below).
    expect([r.code, r.err, r.notice, r.stdout.trim().split('\n').length]).toEqual([0, undefined, { notice: expect.any(String) }, 1])
    expect(r.out).toEqual({ account_id: ids.boss, email: 'boss@example.com', tier: 'business', api_grant_until: null, created_at: expect.any(Number) })
    expect(ids.boss).toMatch(/^acct_/)
  })

  it('creates a pro and a basic account, with nothing on stderr once the database is there', async () => {
    const writer = await admin('account', 'create', '--email', 'writer@example.com', '--tier', 'pro')
    expect([writer.code, writer.stderr]).toEqual([0, ''])
    ids.writer = writer.out.account_id
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

  it('shows an account by email, and lists every account by email', async () => {
    const shown = await admin('account', 'show', '--email', 'Writer@Example.com')
    expect([shown.code, shown.stderr, shown.out]).toEqual([0, '', { account_id: ids.writer, email: 'writer@example.com', tier: 'pro', api_grant_until: null, created_at: expect.any(Number) }])
    const page = await admin('account', 'list', '--limit', '2')
    expect([page.code, page.out.accounts.map((a: { email: string }) => a.email), page.out.next_cursor]).toEqual([0, ['basic@example.com', 'boss@example.com'], expect.stringMatching(/^ac1_/)])
    const rest = await admin('account', 'list', '--cursor', page.out.next_cursor)
    expect([rest.code, rest.out]).toEqual([0, { accounts: [shown.out], next_cursor: null }])
    // A typed value is no place in the list: exit 1, not a partial listing.
    const typed = await admin('account', 'list', '--cursor', 'boss@example.com')
    expect([typed.code, typed.stdout, JSON.parse(typed.stderr).error]).toEqual([1, '', expect.stringContaining('not a next_cursor of account list')])
  })

  it('exits 1 with {"error"} for an email no account has', async () => {
    const r = await admin('account', 'show', '--email', 'nobody@example.com')
    expect([r.code, r.stdout, r.err]).toEqual([1, '', { error: 'no account with email "nobody@example.com"' }])
  })

  it('shows the team by name and by id, with its members', async () => {
    const byName = await admin('team', 'show', 'Branch library')
    expect([byName.code, byName.out.team_id, byName.out.members.map((m: { email: string; role: string }) => [m.email, m.role]).sort()]).toEqual([
      0, ids.team, [['boss@example.com', 'admin'], ['writer@example.com', 'writer']],
    ])
    expect((await admin('team', 'show', '--team', ids.team!)).out).toEqual(byName.out)
  })

  it('creates a personal key shown once with its prefix and name', async () => {
    const r = await admin('key', 'create', '--account', ids.writer!, '--scope', 'personal', '--name', 'Laptop')
    secrets.personal = r.out.key
    expect(r.code).toBe(0)
    expect(r.out).toEqual({ key_id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^lrp_[0-9A-Za-z]{32}$/), name: 'Laptop', scope: 'personal', team_id: null, created_at: expect.any(Number), active_at: r.out.created_at })
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

  it('lists the keys with their names, without their secrets', async () => {
    const r = await admin('key', 'list', '--account', ids.writer!)
    expect(r.code).toBe(0)
    expect(r.out.keys.map((k: { scope: string; name: string | null }) => [k.scope, k.name])).toEqual([['personal', 'Laptop'], ['business', null]])
    expect(Object.keys(r.out.keys[0]).sort()).toEqual(['active_at', 'created_at', 'key_id', 'last_four', 'last_used_at', 'name', 'revoked_at', 'scope', 'team_id'])
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

  it('lets the team admin revoke the business key, and says whose it was', async () => {
    const r = await admin('key', 'revoke', '--key-id', ids.businessKey!, '--by', ids.boss!)
    expect([r.code, r.out]).toEqual([0, { key_id: ids.businessKey, account_id: ids.writer, revoked_at: expect.any(Number) }])
  })

  it('revokes a leaked key by its secret, naming its id and owner, and never prints the secret', async () => {
    const r = await admin('key', 'revoke', '--key', secrets.personal!)
    expect([r.code, r.out]).toEqual([0, { key_id: expect.stringMatching(/^key_/), account_id: ids.writer, revoked_at: expect.any(Number) }])
    expect(r.stdout + r.stderr).not.toContain(secrets.personal!.slice(4))
    const listed = (await admin('key', 'list', '--account', ids.writer!)).out.keys.find((k: { key_id: string }) => k.key_id === r.out.key_id)
    expect([listed.scope, listed.revoked_at]).toEqual(['personal', r.out.revoked_at])
  })

  it('removes the member from the team', async () => {
    const r = await admin('team', 'remove-member', '--team', ids.team!, '--account', ids.writer!)
    expect([r.code, r.out]).toEqual([0, { team_id: ids.team, account_id: ids.writer, removed: true, revoked_key_id: null }])
  })
})

// A DATA_DIR with a typo must not pass for a deployment: an empty database there takes the
// account and the key, and the server, which never sees them, answers 403.
describe('bun run admin where DATA_DIR holds no database (STORE=sqlite)', () => {
  const root = mkdtempSync(join(tmpdir(), 'lr-auth-cli-new-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  const typo = join(root, 'datta')
  const adminIn = (dir: string, ...args: string[]) => runCli(args, { DATA_DIR: dir })
  const refusal = `no auth database at ${join(typo, 'auth.sqlite')}: is DATA_DIR (${typo}) the one the server runs with? Only account create starts a new one`

  it('refuses every command but account create with exit 1 and one line naming the file, and makes nothing', async () => {
    const lines = [
      ['account', 'show', '--email', 'ops@example.com'],
      ['account', 'list'],
      ['team', 'show', 'Ops'],
      ['key', 'list', '--account', 'acct_x'],
      ['key', 'create', '--account', 'acct_x', '--scope', 'personal'],
      ['account', 'update', '--account', 'acct_x', '--tier', 'pro'],
    ]
    for (const args of lines) {
      const r = await adminIn(typo, ...args)
      expect([args.join(' '), r.code, r.stdout, r.stderr.trim().split('\n').length, r.err]).toEqual([args.join(' '), 1, '', 1, { error: refusal }])
    }
    expect(existsSync(typo)).toBe(false)
  })

  it('lets account create make the database, naming its full path in one notice line on stderr; stdout stays the JSON', async () => {
    const fresh = join(root, 'fresh')
    const r = await adminIn(fresh, 'account', 'create', '--email', 'ops@example.com', '--tier', 'pro')
    const file = join(fresh, 'auth.sqlite')
    expect([r.code, r.stderr.trim().split('\n').length, r.err]).toEqual([0, 1, undefined])
    expect(r.notice).toEqual({ notice: `created a new auth database at ${file}; the server must run with this DATA_DIR (${fresh}) to know what this command makes` })
    expect(r.out).toMatchObject({ account_id: expect.stringMatching(/^acct_/), email: 'ops@example.com' })
    expect(existsSync(file)).toBe(true)
    const shown = await adminIn(fresh, 'account', 'show', '--email', 'ops@example.com')
    expect([shown.code, shown.stderr, shown.out]).toEqual([0, '', r.out])
  })

  it('names a relative DATA_DIR by its absolute path', async () => {
    const relativeDir = relative(ROOT, join(root, 'relative'))
    const r = await adminIn(relativeDir, 'account', 'list')
    expect(r.code).toBe(1)
    expect(r.err.error).toStartWith(`no auth database at ${join(root, 'relative', 'auth.sqlite')}: `)
  })

  it('refuses a malformed email as a usage error (exit 1) before making the database', async () => {
    const r = await adminIn(join(root, 'bad-email'), 'account', 'create', '--email', 'not-an-email', '--tier', 'pro')
    expect([r.code, r.stdout, r.stderr.trim().split('\n').length, r.notice, r.err]).toEqual([1, '', 1, undefined, { error: 'email "not-an-email" is not a valid address' }])
    expect(existsSync(join(root, 'bad-email', 'auth.sqlite'))).toBe(false)
  })
})

describe('bun run admin, a bad command line', () => {
  const usage = async (...args: string[]) => {
    const r = await admin(...args)
    expect([r.code, r.stdout, r.stderr.trim().split('\n')]).toEqual([1, '', [expect.stringMatching(/^\{"error":".*"\}$/)]])
    return r.err.error as string
  }

  it('exits 1 with one {"error"} line naming the unknown command', async () => {
    expect(await usage('key', 'destroy', '--key-id', 'key_x')).toStartWith('unknown command "key destroy"')
  })

  it('exits 1 with the usage when no command is given', async () => {
    expect(await usage()).toStartWith('usage: bun run --silent admin <command> [flags]; commands: account create,')
  })

  it('exits 1 naming a missing flag', async () => {
    expect(await usage('account', 'create', '--email', 'x@example.com')).toBe('missing --tier')
  })

  it('exits 1 naming the allowed values of a bad one', async () => {
    expect(await usage('account', 'create', '--email', 'x@example.com', '--tier', 'gold')).toBe('--tier must be one of basic, advanced, pro, business')
  })

  it('exits 1 for a name the flag cannot take (too long), as for any other value', async () => {
    expect(await usage('team', 'create', '--name', 'x'.repeat(201), '--admin', 'acct_1')).toBe('--name must be 1 to 200 characters')
    expect(await usage('key', 'create', '--account', 'acct_1', '--scope', 'personal', '--name', 'é'.repeat(101))).toBe('--name must be 1 to 100 characters')
  })

  it('exits 1 for a control character in an email or a name, which it would print to the terminal', async () => {
    expect(await usage('account', 'create', '--email', 'bel\u0007@example.com', '--tier', 'pro')).toBe('email "bel\\u0007@example.com" is not a valid address (it holds a control character)')
    expect(await usage('team', 'create', '--name', 'Line\nbreak', '--admin', 'acct_1')).toBe('--name must hold no control characters (U+0000 to U+001F, U+007F to U+009F: tab, line break, ESC, ...); it has U+000A at character 5')
    expect(await usage('key', 'create', '--account', 'acct_1', '--scope', 'personal', '--name', 'a\tb')).toBe('--name must hold no control characters (U+0000 to U+001F, U+007F to U+009F: tab, line break, ESC, ...); it has U+0009 at character 2')
  })

  it('exits 1 with the one line of a bad setting (a server process exits 2 on it)', async () => {
    const r = await runCli(['account', 'list'], { DATA_DIR: dataDir, LOG_LEVEL: 'loud' })
    expect([r.code, r.stdout, r.stderr.trim().split('\n').length]).toEqual([1, '', 1])
    expect(r.err.error).toStartWith('invalid setting LOG_LEVEL="loud": must be one of')
  })

  it('never repeats the user and password of NATS_URL when NATS cannot be reached', async () => {
    const port = await freePort()
    const r = await runCli(['account', 'list'], { TRANSPORT: 'nats', NATS_URL: `nats://ops:s3cretpw@127.0.0.1:${port}` })
    expect([r.code, r.stdout]).toEqual([1, ''])
    expect(r.err.error).toStartWith(`cannot reach NATS at nats://127.0.0.1:${port}: `)
    expect(r.stderr).not.toContain('s3cretpw')
    expect(r.stderr).not.toContain('ops')
  })

  it('names MongoDB and its URL, never its password, when it cannot be reached, within the driver\'s 5 s', async () => {
    const port = await freePort()
    const started = Date.now()
    const r = await runCli(['account', 'list'], { STORE: 'mongo', MONGODB_URL: `mongodb://ops:s3cretpw@127.0.0.1:${port}/lr?authSource=lr` })
    expect([r.code, r.stdout, r.stderr.trim().split('\n').length]).toEqual([1, '', 1])
    expect(r.err.error).toStartWith(`MongoDB at mongodb://127.0.0.1:${port}/lr?authSource=lr is unreachable (`)
    expect(r.stderr).not.toContain('s3cretpw')
    expect(Date.now() - started).toBeLessThan(10_000)
  }, 15_000)

  it('exits 1 for an unknown flag, and for account show with neither email nor id', async () => {
    expect(await usage('key', 'list', '--acount', 'acct_1')).toBe('unknown flag --acount; this command takes --account')
    expect(await usage('account', 'show')).toBe('account show needs --email or --account (one of them)')
  })
})

describe('bun run admin --help', () => {
  it('prints the usage of every command on stdout and exits 0, for --help, -h and help', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const r = await admin(flag)
      expect([r.code, r.stderr]).toEqual([0, ''])
      expect(r.stdout).toStartWith('usage: bun run --silent admin <command> [flags]\n')
      for (const name of ['account create', 'account update', 'account show', 'account list', 'team create', 'team show', 'team add-member', 'team remove-member', 'key create', 'key revoke', 'key list'])
        expect(r.stdout).toContain(`\n  ${name} `)
    }
  })

  it('states the exit code a failure really gets: 1, a command line that cannot be run included', async () => {
    const help = (await admin('--help')).stdout
    const bad = await admin('account', 'create', '--email', 'x@example.com', '--tier', 'gold')
    expect(bad.code).toBe(1)
    expect(help).toContain('a command line that cannot be run')
    expect(help).toContain('and exits 1.')
    expect(help).not.toMatch(/exits\s+(1 \(.*\) or )?2/s)
  })

  it("prints each command's usage, flags and output, and exits 0", async () => {
    const r = await admin('key', 'create', '--help')
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout.split('\n')[0]).toBe('usage: bun run --silent admin key create --account ACCOUNT_ID --scope SCOPE [--team TEAM_ID] [--name NAME]')
    expect(r.stdout).toContain('  --name NAME ')
    expect(r.stdout).toContain('prints: {"key_id", "key", "name", "scope", "team_id", "created_at", "active_at"}')
    const show = await admin('team', 'show', '--help')
    expect([show.code, show.stdout.split('\n')[0]]).toEqual([0, 'usage: bun run --silent admin team show --team TEAM_ID|NAME'])
  })

  it('exits 1 for the help of a command that does not exist', async () => {
    const r = await admin('key', 'destroy', '--help')
    expect([r.code, r.stdout, r.err.error]).toEqual([1, '', expect.stringMatching(/^unknown command "key destroy"/)])
  })
})
