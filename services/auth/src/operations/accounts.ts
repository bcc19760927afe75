import { type Account, type AccountCreateRequest, type AccountUpdateRequest, AppError } from '@lr/proto'
import type { AuthDeps } from '../ports'
import { normaliseEmail } from '../rules'
import { newId } from '../secret'
import { answeringConflicts, duplicateId, emailTaken } from '../conflicts'
import { requireAccount } from './lookups'

export async function createAccount({ store, now }: AuthDeps, req: AccountCreateRequest): Promise<Account> {
  const email = normaliseEmail(req.email)
  if (!email) throw new AppError('bad_request', `email "${req.email}" is not a valid address`)
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
