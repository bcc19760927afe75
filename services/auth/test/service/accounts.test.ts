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

  // The command line prints the email as given: a BEL or ESC in it would act on the terminal.
  it('refuses an email with a control character, and creates nothing', async () => {
    const w = world()
    for (const email of ['a\u0001b@example.com', 'ops@exa\u001b[31mmple.com', 'ops\u0085@example.com']) {
      const error = await rejection(w.service.accountCreate({ email, tier: 'pro' }))
      expect([error.status, error.message]).toEqual([400, `email ${JSON.stringify(email)} is not a valid address (it holds a control character)`])
    }
    expect((await w.service.accountList({})).accounts).toEqual([])
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

describe('account show and account list', () => {
  it('shows an account by email, whatever its case and spaces, or by id', async () => {
    const w = world()
    const ada = await w.account('pro', 'ada@example.com')
    expect(await w.service.accountShow({ email: ' ADA@example.com ' })).toEqual(ada)
    expect(await w.service.accountShow({ account_id: ada.account_id })).toEqual(ada)
  })

  it('answers 404 for an email no account has, and 400 unless exactly one of email and id is given', async () => {
    const w = world()
    const missing = await rejection(w.service.accountShow({ email: 'nobody@example.com' }))
    expect([missing.status, missing.message]).toEqual([404, 'no account with email "nobody@example.com"'])
    const both = await rejection(w.service.accountShow({ email: 'a@example.com', account_id: 'acct_1' }))
    expect([both.status, both.message]).toEqual([400, 'give exactly one of email and account_id'])
    expect((await rejection(w.service.accountShow({}))).status).toBe(400)
  })

  it('lists every account by email, page by page', async () => {
    const w = world()
    const [c, a, b] = [await w.account('pro', 'c@example.com'), await w.account('basic', 'a@example.com'), await w.account('business', 'b@example.com')]
    const first = await w.service.accountList({ limit: 2 })
    expect(first).toEqual({ accounts: [a, b], next_cursor: expect.stringMatching(/^ac1_/) })
    expect(await w.service.accountList({ limit: 2, cursor: first.next_cursor! })).toEqual({ accounts: [c], next_cursor: null })
    expect((await w.service.accountList({})).accounts).toHaveLength(3)
  })

  it('refuses a cursor it did not give: an email, a typo, another encoding of the same email', async () => {
    const w = world()
    await w.account('pro', 'a@example.com')
    await w.account('pro', 'b@example.com')
    const { next_cursor } = await w.service.accountList({ limit: 1 })
    for (const cursor of ['a@example.com', 'garbage', `${next_cursor}x`, next_cursor!.slice(0, -1), 'ac1_', `ac1_${Buffer.from('not an email').toString('base64url')}`]) {
      const refused = await rejection(w.service.accountList({ cursor }))
      expect([cursor, refused.status, refused.message]).toEqual([cursor, 400, expect.stringContaining('not a next_cursor of account list')])
    }
  })

  it('takes no new account whose email mail cannot carry: 64 bytes before the @, 254 in all', async () => {
    const w = world()
    const local64 = 'a'.repeat(64)
    expect((await w.service.accountCreate({ email: `${local64}@example.com`, tier: 'pro' })).email).toBe(`${local64}@example.com`)
    expect((await rejection(w.service.accountCreate({ email: `${local64}b@example.com`, tier: 'pro' }))).status).toBe(400)
    const domain = `${'d'.repeat(60)}.${'e'.repeat(60)}.${'f'.repeat(60)}.${'g'.repeat(58)}.com` // 245 characters
    expect((await w.service.accountCreate({ email: `abcdefgh@${domain}`, tier: 'pro' })).email).toHaveLength(254)
    const tooLong = await rejection(w.service.accountCreate({ email: `abcdefghi@${domain}`, tier: 'pro' }))
    expect([tooLong.status, tooLong.message]).toEqual([400, expect.stringContaining('at most 64 bytes before the @, 254 in all')])
  })
})
