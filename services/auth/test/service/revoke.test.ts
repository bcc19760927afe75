import { describe, expect, it } from 'bun:test'
import { rejection, T0, world } from '../fixtures'

async function teamWithKeys() {
  const w = world()
  const { team_id, admin } = await w.team()
  const writer = await w.member(team_id, 'writer')
  const other = await w.member(team_id, 'writer')
  const key = await w.service.keyCreate({ account_id: writer.account_id, scope: 'business', team_id })
  return { w, team_id, admin, writer, other, key }
}

describe('key revoke', () => {
  it('lets the operator revoke any key when no --by is given, and says whose it was', async () => {
    const { w, writer, key } = await teamWithKeys()
    w.clock.now = T0 + 5
    expect(await w.service.keyRevoke({ key_id: key.key_id })).toEqual({ key_id: key.key_id, account_id: writer.account_id, revoked_at: T0 + 5 })
  })

  it('lets the owner revoke their own key', async () => {
    const { w, writer, key } = await teamWithKeys()
    expect((await w.service.keyRevoke({ key_id: key.key_id, by: writer.account_id })).revoked_at).toBe(T0)
  })

  it("lets a team admin revoke a teammate's business key", async () => {
    const { w, admin, key } = await teamWithKeys()
    expect((await w.service.keyRevoke({ key_id: key.key_id, by: admin.account_id })).revoked_at).toBe(T0)
  })

  it("refuses a writer revoking a teammate's business key", async () => {
    const { w, other, key } = await teamWithKeys()
    const error = await rejection(w.service.keyRevoke({ key_id: key.key_id, by: other.account_id }))
    expect([error.status, error.message]).toEqual([403, `account ${other.account_id} may not revoke key ${key.key_id}: only its owner or an admin of its team can`])
  })

  it('refuses a stranger revoking a key', async () => {
    const { w, key } = await teamWithKeys()
    const stranger = await w.account('business')
    const error = await rejection(w.service.keyRevoke({ key_id: key.key_id, by: stranger.account_id }))
    expect([error.status, error.code]).toEqual([403, 'forbidden'])
  })

  it('says an unknown revoking account is not found, not that it may not revoke', async () => {
    const { w, key } = await teamWithKeys()
    const error = await rejection(w.service.keyRevoke({ key_id: key.key_id, by: 'acct_nope' }))
    expect([error.status, error.message]).toEqual([404, 'account acct_nope not found'])
    expect((await w.service.keyList({ account_id: (await w.store.getKey(key.key_id))!.account_id })).keys[0]!.revoked_at).toBeNull()
  })

  it("refuses a team admin revoking a teammate's personal key", async () => {
    const { w, admin, writer } = await teamWithKeys()
    const personal = await w.service.keyCreate({ account_id: writer.account_id, scope: 'personal' })
    const error = await rejection(w.service.keyRevoke({ key_id: personal.key_id, by: admin.account_id }))
    expect(error.status).toBe(403)
  })

  it('keeps the first revocation time when a key is revoked again', async () => {
    const { w, key } = await teamWithKeys()
    await w.service.keyRevoke({ key_id: key.key_id })
    w.clock.now = T0 + 100
    expect((await w.service.keyRevoke({ key_id: key.key_id })).revoked_at).toBe(T0)
  })

  it('answers 404 for an unknown key', async () => {
    const error = await rejection(world().service.keyRevoke({ key_id: 'key_none' }))
    expect([error.status, error.message]).toEqual([404, 'key key_none not found'])
  })

  // A leaked key is found as its secret (a repository, a log, a secret scanner's report): its
  // id was only ever printed beside it, once. The operator revokes it by the secret itself.
  it('revokes a key by its secret, and the secret no longer verifies', async () => {
    const { w, writer, key } = await teamWithKeys()
    w.clock.now = T0 + 7
    expect(await w.service.keyRevoke({ key: key.key })).toEqual({ key_id: key.key_id, account_id: writer.account_id, revoked_at: T0 + 7 })
    expect((await rejection(w.service.verify(key.key))).message).toBe('API key has been revoked')
  })

  it('applies --by to a key named by its secret as to one named by its id', async () => {
    const { w, other, admin, key } = await teamWithKeys()
    expect((await rejection(w.service.keyRevoke({ key: key.key, by: other.account_id }))).status).toBe(403)
    expect((await w.service.keyRevoke({ key: key.key, by: admin.account_id })).key_id).toBe(key.key_id)
  })

  it('answers 404 for a secret no key has, without echoing it', async () => {
    const { w, key } = await teamWithKeys()
    const unknown = `${key.key.slice(0, -1)}${key.key.endsWith('a') ? 'b' : 'a'}`
    for (const secret of [unknown, 'not a key at all']) {
      const error = await rejection(w.service.keyRevoke({ key: secret }))
      expect([error.status, error.message]).toEqual([404, 'no key of this deployment has this secret'])
    }
    expect((await w.store.getKey(key.key_id))!.revoked_at).toBeNull()
  })

  it('refuses a request naming the key both ways, or neither', async () => {
    const { w, key } = await teamWithKeys()
    for (const req of [{ key_id: key.key_id, key: key.key }, {}]) {
      const error = await rejection(w.service.keyRevoke(req))
      expect([error.status, error.message]).toEqual([400, 'give exactly one of key_id and key (the secret)'])
    }
  })
})
