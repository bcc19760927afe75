import { describe, expect, it } from 'bun:test'
import { createHash } from 'node:crypto'
import { hashSecret } from '../../src/secret'
import { rejection, T0, world } from '../fixtures'

const NO_ACCESS = 'this account no longer has API access (plan or temporary grant); a new key will not help'
const NOT_TEAM_WRITER = "API key's owner is no longer a writer or admin of the team"

async function personalKey(w = world()) {
  const account = await w.account('pro')
  const created = await w.service.keyCreate({ account_id: account.account_id, scope: 'personal' })
  return { w, account, created }
}

async function businessKey(w = world()) {
  const { team_id, admin } = await w.team()
  const writer = await w.member(team_id, 'writer')
  const created = await w.service.keyCreate({ account_id: writer.account_id, scope: 'business', team_id })
  return { w, team_id, admin, writer, created }
}

describe('verify', () => {
  it('looks a key up by the same hash every stored key has: SHA-256 of the secret, in lower-case hex', () => {
    for (const secret of [`lrp_${'a1B2'.repeat(8)}`, `lrb_${'Z9y8'.repeat(8)}`, 'é'])
      expect(hashSecret(secret)).toBe(createHash('sha256').update(secret).digest('hex'))
  })

  it('refuses a missing key with 403 and says to send x-api-key', async () => {
    const w = world()
    for (const key of [null, undefined, '']) {
      const error = await rejection(w.service.verify(key))
      expect([error.status, error.code, error.message]).toEqual([403, 'forbidden', 'missing API key: send it in the x-api-key header'])
    }
  })

  it('refuses a well-formed key that was never issued as invalid', async () => {
    const error = await rejection(world().service.verify(`lrp_${'a'.repeat(32)}`))
    expect([error.status, error.message]).toEqual([403, 'invalid API key'])
  })

  it('refuses text that is not shaped like a key as invalid', async () => {
    const error = await rejection(world().service.verify('Bearer something'))
    expect([error.status, error.message]).toEqual([403, 'invalid API key'])
  })

  it('returns the owner principal of a personal key', async () => {
    const { w, account, created } = await personalKey()
    expect(await w.service.verify(created.key)).toEqual({
      account_id: account.account_id, key_id: created.key_id, scope: 'personal', team_id: null, role: 'owner',
    })
  })

  it('returns the team and the member role of a business key', async () => {
    const { w, team_id, writer, created } = await businessKey()
    expect(await w.service.verify(created.key)).toEqual({
      account_id: writer.account_id, key_id: created.key_id, scope: 'business', team_id, role: 'writer',
    })
  })

  it('refuses a key before its activation with the seconds left as retryAfter', async () => {
    const { w, created } = await personalKey(world({ activationDelayS: 300 }))
    w.clock.now = T0 + 100
    const error = await rejection(w.service.verify(created.key))
    expect([error.status, error.message, error.details?.retryAfter]).toEqual([403, 'API key is not active yet', 200])
  })

  it('asks to retry after at least one second when activation is one second away', async () => {
    const { w, created } = await personalKey(world({ activationDelayS: 1 }))
    const error = await rejection(w.service.verify(created.key))
    expect(error.details?.retryAfter).toBe(1)
  })

  it('accepts a key from the second it becomes active', async () => {
    const { w, created } = await personalKey(world({ activationDelayS: 300 }))
    w.clock.now = T0 + 300
    expect((await w.service.verify(created.key)).key_id).toBe(created.key_id)
  })

  it('refuses a revoked key on the very next request', async () => {
    const { w, created } = await personalKey()
    await w.service.verify(created.key)
    await w.service.keyRevoke({ key_id: created.key_id })
    const error = await rejection(w.service.verify(created.key))
    expect([error.status, error.message]).toEqual([403, 'API key has been revoked'])
  })

  it('refuses the key of an account downgraded to basic, mentioning API access', async () => {
    const { w, account, created } = await personalKey()
    await w.service.accountUpdate({ account_id: account.account_id, tier: 'basic' })
    const error = await rejection(w.service.verify(created.key))
    expect([error.status, error.message]).toEqual([403, NO_ACCESS])
  })

  it('accepts the key of a basic account while its temporary grant lasts', async () => {
    const w = world()
    const account = await w.account('basic')
    await w.service.accountUpdate({ account_id: account.account_id, api_grant_until: T0 + 3600 })
    const created = await w.service.keyCreate({ account_id: account.account_id, scope: 'personal' })
    w.clock.now = T0 + 3599
    expect((await w.service.verify(created.key)).account_id).toBe(account.account_id)
  })

  it('refuses the key of a basic account once its temporary grant expires', async () => {
    const w = world()
    const account = await w.account('basic')
    await w.service.accountUpdate({ account_id: account.account_id, api_grant_until: T0 + 3600 })
    const created = await w.service.keyCreate({ account_id: account.account_id, scope: 'personal' })
    w.clock.now = T0 + 3600
    const error = await rejection(w.service.verify(created.key))
    expect([error.status, error.message]).toEqual([403, NO_ACCESS])
  })

  it('refuses a business key once its owner is removed from the team (the removal revokes it)', async () => {
    const { w, team_id, writer, created } = await businessKey()
    await w.service.teamRemoveMember({ team_id, account_id: writer.account_id })
    const error = await rejection(w.service.verify(created.key))
    expect([error.status, error.message]).toEqual([403, expect.stringContaining('revoked')])
  })

  it('refuses a business key whose owner is out of the team though the key is not revoked (a removal cut short)', async () => {
    const { w, team_id, writer, created } = await businessKey()
    await w.store.removeMembership(team_id, writer.account_id)
    const error = await rejection(w.service.verify(created.key))
    expect([error.status, error.message]).toEqual([403, NOT_TEAM_WRITER])
  })

  it('refuses a business key once its owner becomes a viewer', async () => {
    const { w, team_id, writer, created } = await businessKey()
    await w.service.teamAddMember({ team_id, account_id: writer.account_id, role: 'viewer' })
    const error = await rejection(w.service.verify(created.key))
    expect([error.status, error.message]).toEqual([403, NOT_TEAM_WRITER])
  })

  it('reports the current team role of a business key after a promotion', async () => {
    const { w, team_id, writer, created } = await businessKey()
    await w.service.teamAddMember({ team_id, account_id: writer.account_id, role: 'admin' })
    expect((await w.service.verify(created.key)).role).toBe('admin')
  })

  it('records the first use of a key', async () => {
    const { w, account, created } = await personalKey()
    await w.service.verify(created.key)
    expect((await w.service.keyList({ account_id: account.account_id })).keys[0]?.last_used_at).toBe(T0)
  })

  it('writes last_used_at at most once a minute', async () => {
    const { w, account, created } = await personalKey()
    const lastUsed = async () => (await w.service.keyList({ account_id: account.account_id })).keys[0]?.last_used_at
    await w.service.verify(created.key)
    w.clock.now = T0 + 59
    await w.service.verify(created.key)
    expect(await lastUsed()).toBe(T0)
    w.clock.now = T0 + 60
    await w.service.verify(created.key)
    expect(await lastUsed()).toBe(T0 + 60)
  })
})
