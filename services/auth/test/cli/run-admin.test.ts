import { describe, expect, it } from 'bun:test'
import { AUTH_SUBJECTS } from '@lr/proto'
import { UsageError } from '../../src/cli/args'
import { helpFor } from '../../src/cli/help'
import { USAGE } from '../../src/cli/commands'
import { runAdmin } from '../../src/cli/run-admin'

/** A call that records what it was asked and answers `{ok: true}`. */
function recorder() {
  const calls: [string, unknown][] = []
  const call = async (subject: string, payload: unknown) => (calls.push([subject, payload]), { ok: true })
  return { calls, call }
}

const split = (line: string) => line.split(' ')
const LEAKED = 'lrp_0123456789abcdefghijABCDEFGHIJ01'

describe('runAdmin', () => {
  it('sends key create with the business team to the keyCreate subject', async () => {
    const { calls, call } = recorder()
    await runAdmin(split('key create --account acct_1 --scope business --team team_1'), call)
    expect(calls).toEqual([[AUTH_SUBJECTS.keyCreate, { account_id: 'acct_1', scope: 'business', team_id: 'team_1' }]])
  })

  it('sends --api-grant-until none as a null grant', async () => {
    const { calls, call } = recorder()
    await runAdmin(split('account update --account acct_1 --api-grant-until none'), call)
    expect(calls).toEqual([[AUTH_SUBJECTS.accountUpdate, { account_id: 'acct_1', api_grant_until: null }]])
  })

  it('sends key revoke --by as the revoking account', async () => {
    const { calls, call } = recorder()
    await runAdmin(split('key revoke --key-id key_1 --by acct_2'), call)
    expect(calls).toEqual([[AUTH_SUBJECTS.keyRevoke, { key_id: 'key_1', by: 'acct_2' }]])
  })

  it('sends key revoke --key as the secret, for a leaked key whose id nobody has', async () => {
    const { calls, call } = recorder()
    await runAdmin(split(`key revoke --key ${LEAKED}`), call)
    expect(calls).toEqual([[AUTH_SUBJECTS.keyRevoke, { key: LEAKED }]])
  })

  it('sends key create --name with the key', async () => {
    const { calls, call } = recorder()
    await runAdmin(['key', 'create', '--account', 'acct_1', '--scope', 'personal', '--name', 'CI deploys'], call)
    expect(calls).toEqual([[AUTH_SUBJECTS.keyCreate, { account_id: 'acct_1', scope: 'personal', name: 'CI deploys' }]])
  })

  it('sends account show by email or by id, and account list with its page', async () => {
    const { calls, call } = recorder()
    await runAdmin(split('account show --email ada@example.com'), call)
    await runAdmin(split('account show --account acct_1'), call)
    await runAdmin(split('account list'), call)
    await runAdmin(split('account list --limit 5 --cursor ac1_YkBleGFtcGxlLmNvbQ'), call)
    expect(calls).toEqual([
      [AUTH_SUBJECTS.accountShow, { email: 'ada@example.com' }],
      [AUTH_SUBJECTS.accountShow, { account_id: 'acct_1' }],
      [AUTH_SUBJECTS.accountList, {}],
      [AUTH_SUBJECTS.accountList, { limit: 5, cursor: 'ac1_YkBleGFtcGxlLmNvbQ' }],
    ])
  })

  it('sends team show with the team as a bare word or as --team', async () => {
    const { calls, call } = recorder()
    await runAdmin(['team', 'show', 'Branch library'], call)
    await runAdmin(split('team show --team team_1'), call)
    expect(calls).toEqual([[AUTH_SUBJECTS.teamShow, { team: 'Branch library' }], [AUTH_SUBJECTS.teamShow, { team: 'team_1' }]])
  })

  it('lets only account create make the store where there is none', async () => {
    const asked: [string, boolean][] = []
    const call = async (subject: string, _payload: unknown, opts: { createsStore: boolean }) => (asked.push([subject, opts.createsStore]), {})
    for (const line of ['account create --email a@example.com --tier pro', 'account list', 'key create --account acct_1 --scope personal', 'key list --account acct_1', 'team show Ops'])
      await runAdmin(split(line), call)
    expect(asked).toEqual([
      [AUTH_SUBJECTS.accountCreate, true],
      [AUTH_SUBJECTS.accountList, false],
      [AUTH_SUBJECTS.keyCreate, false],
      [AUTH_SUBJECTS.keyList, false],
      [AUTH_SUBJECTS.teamShow, false],
    ])
  })

  it('resolves with what the service answered', async () => {
    expect(await runAdmin(split('key list --account acct_1'), recorder().call)).toEqual({ ok: true })
  })

  const refusals: [string, string][] = [
    ['', USAGE],
    ['key destroy', `unknown command "key destroy"; ${USAGE}`],
    ['key list --account acct_1 --account acct_2', '--account is given twice'],
    ['key list --account', '--account needs a value'],
    ['key list acct_1', 'unexpected argument "acct_1"'],
    ['key create --account acct_1 --scope personal --team team_1', 'a personal key belongs to no team: leave --team out'],
    ['key create --account acct_1 --scope business', 'a business key needs --team TEAM_ID'],
    ['account update --account acct_1', 'account update needs --tier and/or --api-grant-until'],
    ['account update --account acct_1 --api-grant-until soon', '--api-grant-until must be epoch seconds or "none"'],
    ['team add-member --team t --account a --role owner', '--role must be one of admin, writer, viewer'],
    ['account show', 'account show needs --email or --account (one of them)'],
    ['account show --email a@example.com --account acct_1', 'account show needs --email or --account (one of them)'],
    ['account list --limit 0', '--limit must be a whole number from 1 to 1000'],
    ['account list --limit many', '--limit must be a whole number from 1 to 1000'],
    ['account list --cursor b@example.com', 'cursor is not a next_cursor of account list: pass it as it was printed, or leave it out for the first page'],
    ['team show', 'missing --team'],
    ['team show one two', 'unexpected argument "two": the team is already given (one)'],
    ['team show --team one two', 'unexpected argument "two": the team is already given (one)'],
    ['account list --email a@example.com', 'unknown flag --email; this command takes --limit, --cursor'],
    // A secret is never echoed: these lines land in terminals and CI logs.
    ['key revoke', 'give one of --key-id KEY_ID and --key SECRET'],
    [`key revoke --key-id key_1 --key ${LEAKED}`, 'give one of --key-id KEY_ID and --key SECRET'],
    [`key revoke --key-id ${LEAKED}`, "--key-id takes a key's id (key_...); to revoke a key by its secret, pass the secret as --key"],
    [`key revoke --key ${LEAKED}x`, '--key is not an API key of this product (lrp_ or lrb_ and 32 letters and digits)'],
  ]
  for (const [line, message] of refusals) {
    it(`refuses "${line}" without calling the service`, async () => {
      const { calls, call } = recorder()
      const error = await runAdmin(line ? split(line) : [], call).then(() => null, (e: Error) => e)
      expect(error).toBeInstanceOf(UsageError)
      expect([error?.message, calls.length]).toEqual([message, 0])
    })
  }
})

describe('helpFor', () => {
  it('asks for no help on an ordinary command line', () => {
    expect(helpFor(split('key list --account acct_1'))).toBeNull()
  })

  it('lists every command for --help, -h and help', () => {
    for (const argv of [['--help'], ['-h'], ['help']]) {
      const help = helpFor(argv)!
      expect(help).toStartWith('usage: bun run --silent admin <command> [flags]')
      for (const name of ['account create', 'account show', 'account list', 'team show', 'key create', 'key list']) expect(help).toContain(`  ${name} `)
    }
  })

  it("shows one command's flags, wherever --help stands", () => {
    for (const argv of [split('key create --help'), split('key create --account acct_1 --help'), split('help key create')]) {
      const help = helpFor(argv)!
      expect(help).toStartWith('usage: bun run --silent admin key create --account ACCOUNT_ID --scope SCOPE [--team TEAM_ID] [--name NAME]')
      expect(help).toContain('--name NAME')
      expect(help).toContain('prints: {"key_id", "key", "name",')
    }
  })

  it("shows every command of a group for the group's --help", () => {
    const help = helpFor(split('team --help'))!
    expect(help.match(/^usage: /gm)).toHaveLength(4)
  })

  it('refuses help for an unknown command with a usage error', () => {
    expect(() => helpFor(split('key destroy --help'))).toThrow(UsageError)
    expect(() => helpFor(split('keys --help'))).toThrow('unknown command "keys"')
  })
})
