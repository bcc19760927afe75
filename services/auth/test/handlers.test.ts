import { describe, expect, it } from 'bun:test'
import { type Account, AUTH_SUBJECTS, type CreatedKey, type Principal } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { serveAuth } from '../src/handlers'
import { T0, rejection, world } from './fixtures'

function served({ activationDelayS = 0 } = {}) {
  const w = world({ activationDelayS })
  const bus = createLocalBus()
  const stop = serveAuth(bus, w.service)
  return { w, bus, stop }
}

describe('auth handlers over the in-process bus', () => {
  it('answers every auth subject', async () => {
    const { bus } = served()
    // An answer or a refusal (most subjects refuse an empty payload), never "no service".
    for (const subject of Object.values(AUTH_SUBJECTS)) {
      const error = await bus.request(subject, {}).then(() => null, (e: { code: string }) => e)
      expect(error?.code).not.toBe('unavailable')
    }
  })

  it('creates an account and a key, then verifies the key to its principal', async () => {
    const { bus } = served()
    const account = await bus.request<Account>(AUTH_SUBJECTS.accountCreate, { email: 'ada@example.com', tier: 'pro' })
    const key = await bus.request<CreatedKey>(AUTH_SUBJECTS.keyCreate, { account_id: account.account_id, scope: 'personal' })
    expect(await bus.request<Principal>(AUTH_SUBJECTS.verify, { key: key.key })).toEqual({
      account_id: account.account_id, key_id: key.key_id, scope: 'personal', team_id: null, role: 'owner',
    })
  })

  it('refuses a malformed payload with 400 naming the field', async () => {
    const { bus } = served()
    const error = await rejection(bus.request(AUTH_SUBJECTS.accountCreate, { email: 'ada@example.com', tier: 'gold' }))
    expect([error.status, error.code]).toEqual([400, 'bad_request'])
    expect(error.message).toStartWith('malformed request at /tier')
  })

  it('carries a 403 with its retryAfter across the bus', async () => {
    const { w, bus } = served({ activationDelayS: 90 })
    const a = await w.account('pro')
    const key = await w.service.keyCreate({ account_id: a.account_id, scope: 'personal' })
    w.clock.now = T0 + 30
    const error = await rejection(bus.request(AUTH_SUBJECTS.verify, { key: key.key }))
    expect([error.status, error.message, error.details]).toEqual([403, 'API key is not active yet', { retryAfter: 60 }])
  })

  it('answers a missing key with the message the gateway shows', async () => {
    const { bus } = served()
    const error = await rejection(bus.request(AUTH_SUBJECTS.verify, { key: null }))
    expect([error.status, error.message]).toEqual([403, 'missing API key: send it in the x-api-key header'])
  })

  async function writerWithBusinessKey() {
    const { w, bus } = served()
    const { team_id, admin } = await w.team()
    const writer = await w.member(team_id, 'writer')
    const key = await w.service.keyCreate({ account_id: writer.account_id, scope: 'business', team_id })
    return { bus, team_id, admin, writer, key }
  }

  it('answers a revoke with the key id, its owner and its revocation time', async () => {
    const { bus, admin, writer, key } = await writerWithBusinessKey()
    expect(await bus.request(AUTH_SUBJECTS.keyRevoke, { key_id: key.key_id, by: admin.account_id })).toEqual({ key_id: key.key_id, account_id: writer.account_id, revoked_at: T0 })
  })

  it('answers a member removal with removed: true and the business key it revoked', async () => {
    const { bus, team_id, writer } = await writerWithBusinessKey()
    expect(await bus.request(AUTH_SUBJECTS.teamRemoveMember, { team_id, account_id: writer.account_id })).toEqual({ team_id, account_id: writer.account_id, removed: true, revoked_key_id: expect.stringMatching(/^key_/) })
  })

  it('answers a key list with every field of the admin contract', async () => {
    const { bus, team_id, writer, key } = await writerWithBusinessKey()
    expect(await bus.request(AUTH_SUBJECTS.keyList, { account_id: writer.account_id })).toEqual({
      keys: [{ key_id: key.key_id, name: null, scope: 'business', team_id, last_four: key.key.slice(-4), created_at: T0, active_at: T0, revoked_at: null, last_used_at: null }],
    })
  })

  it('stops answering once unsubscribed', async () => {
    const { bus, stop } = served()
    stop()
    const error = await rejection(bus.request(AUTH_SUBJECTS.verify, { key: null }))
    expect([error.status, error.code]).toEqual([503, 'unavailable'])
  })
})
