import { describe, expect, it } from 'bun:test'
import { AUTH_SUBJECTS } from '@lr/proto'
import { runAdmin } from '../../src/cli/run-admin'
import { rejection } from '../rejection'

/** A call that records what it was asked and answers `{ok: true}`. */
function recorder() {
  const calls: [string, unknown][] = []
  const call = async (subject: string, payload: unknown) => (calls.push([subject, payload]), { ok: true })
  return { calls, call }
}

const split = (line: string) => line.split(' ')

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

  it('resolves with what the service answered', async () => {
    expect(await runAdmin(split('key list --account acct_1'), recorder().call)).toEqual({ ok: true })
  })

  const refusals: [string, string][] = [
    ['', 'usage: bun run admin <command> [flags]; commands: account create, account update, team create, team add-member, team remove-member, key create, key revoke, key list'],
    ['key list --account acct_1 --account acct_2', '--account is given twice'],
    ['key list --account', '--account needs a value'],
    ['key list acct_1', 'unexpected argument "acct_1"'],
    ['key create --account acct_1 --scope personal --team team_1', 'a personal key belongs to no team: leave --team out'],
    ['key create --account acct_1 --scope business', 'a business key needs --team TEAM_ID'],
    ['account update --account acct_1', 'account update needs --tier and/or --api-grant-until'],
    ['account update --account acct_1 --api-grant-until soon', '--api-grant-until must be epoch seconds or "none"'],
    ['team add-member --team t --account a --role owner', '--role must be one of admin, writer, viewer'],
  ]
  for (const [line, message] of refusals) {
    it(`refuses "${line}" without calling the service`, async () => {
      const { calls, call } = recorder()
      const error = await rejection(runAdmin(line ? split(line) : [], call))
      expect([error.code, error.message, calls.length]).toEqual(['bad_request', message, 0])
    })
  }
})
