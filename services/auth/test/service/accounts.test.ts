import { describe, expect, it } from 'bun:test'
import { rejection, T0, world } from '../fixtures'

describe('accounts', () => {
  it('creates an account with its email trimmed and in lower case, and no grant', async () => {
    const account = await world().service.accountCreate({ email: '  Ada@Example.COM ', tier: 'pro' })
    expect(account).toEqual({ account_id: expect.stringMatching(/^acct_/), email: 'ada@example.com', tier: 'pro', api_grant_until: null, created_at: T0 })
  })

  it('refuses an email that is not an address', async () => {
    const error = await rejection(world().service.accountCreate({ email: 'not-an-email', tier: 'pro' }))
    expect([error.status, error.message]).toEqual([400, 'email "not-an-email" is not a valid address'])
  })

  it('refuses a second account with the same email, whatever its case', async () => {
    const w = world()
    await w.service.accountCreate({ email: 'ada@example.com', tier: 'pro' })
    const error = await rejection(w.service.accountCreate({ email: 'ADA@example.com', tier: 'basic' }))
    expect([error.status, error.message]).toEqual([400, 'an account with email ada@example.com already exists'])
  })

  it('changes the tier and answers the account', async () => {
    const w = world()
    const a = await w.account('basic')
    expect(await w.service.accountUpdate({ account_id: a.account_id, tier: 'business' })).toEqual({ ...a, tier: 'business' })
  })

  it('sets and clears a temporary grant', async () => {
    const w = world()
    const a = await w.account('basic')
    expect((await w.service.accountUpdate({ account_id: a.account_id, api_grant_until: T0 + 60 })).api_grant_until).toBe(T0 + 60)
    expect((await w.service.accountUpdate({ account_id: a.account_id, api_grant_until: null })).api_grant_until).toBeNull()
  })

  it('refuses an update that changes nothing', async () => {
    const w = world()
    const a = await w.account('basic')
    const error = await rejection(w.service.accountUpdate({ account_id: a.account_id }))
    expect([error.status, error.message]).toEqual([400, 'nothing to update: give a tier and/or api_grant_until'])
  })

  it('answers 404 when updating an unknown account', async () => {
    const error = await rejection(world().service.accountUpdate({ account_id: 'acct_nobody', tier: 'pro' }))
    expect([error.status, error.message]).toEqual([404, 'account acct_nobody not found'])
  })
})
