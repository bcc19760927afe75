import { type Account, type AccountCreateRequest, type AccountList, type AccountListRequest, type AccountShowRequest, type AccountUpdateRequest, AppError, LIMIT_DEFAULT } from '@lr/proto'
import type { AuthDeps } from '../ports'
import { badEmail, newAccountEmail, normaliseEmail } from '../rules'
import { newId } from '../secret'
import { answeringConflicts, duplicateId, emailTaken } from '../conflicts'
import { requireAccount } from './lookups'
import { accountCursorOf, BAD_ACCOUNT_CURSOR, emailOfAccountCursor } from '../account-cursor'

export async function createAccount({ store, now }: AuthDeps, req: AccountCreateRequest): Promise<Account> {
  const email = newAccountEmail(req.email)
  if (!email) throw new AppError('bad_request', badEmail(req.email))
  const account: Account = { account_id: newId('acct'), email, tier: req.tier, api_grant_until: null, created_at: now() }
  await answeringConflicts(store.insertAccount(account), {
    email: () => emailTaken(email),
    account_id: () => duplicateId('account', account.account_id),
  })
  return account
}

export async function updateAccount({ store }: AuthDeps, req: AccountUpdateRequest): Promise<Account> {
  if (req.tier === undefined && req.api_grant_until === undefined)
    throw new AppError('bad_request', 'nothing to update: give a tier and/or api_grant_until')
  await requireAccount(store, req.account_id)
  const updated = await store.updateAccount(req.account_id, { tier: req.tier, api_grant_until: req.api_grant_until })
  if (!updated) throw new AppError('not_found', `account ${req.account_id} not found`)
  return updated
}

/** One account by email (compared as stored: trimmed, lower case) or by id. */
export async function showAccount({ store }: AuthDeps, req: AccountShowRequest): Promise<Account> {
  if ((req.email === undefined) === (req.account_id === undefined)) throw new AppError('bad_request', 'give exactly one of email and account_id')
  if (req.account_id !== undefined) return requireAccount(store, req.account_id)
  const email = normaliseEmail(req.email!)
  const account = email ? await store.findAccountByEmail(email) : null
  if (!account) throw new AppError('not_found', `no account with email ${JSON.stringify(req.email)}`)
  return account
}

/** A page of every account by email; `next_cursor` (after the page's last email) is null on the last page. */
export async function listAccounts({ store }: AuthDeps, req: AccountListRequest): Promise<AccountList> {
  const limit = req.limit ?? LIMIT_DEFAULT
  const after = req.cursor === undefined ? null : emailOfAccountCursor(req.cursor)
  if (after === null && req.cursor !== undefined) throw new AppError('bad_request', BAD_ACCOUNT_CURSOR)
  // One more than asked tells whether another page follows.
  const accounts = await store.listAccounts(after, limit + 1)
  const page = accounts.slice(0, limit)
  return { accounts: page, next_cursor: accounts.length > limit ? accountCursorOf(page.at(-1)!.email) : null }
}
