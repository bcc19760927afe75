import { type Account, AppError, type Team } from '@lr/proto'
import type { AuthStore } from '../ports'

export async function requireAccount(store: AuthStore, accountId: string): Promise<Account> {
  const account = await store.getAccount(accountId)
  if (!account) throw new AppError('not_found', `account ${accountId} not found`)
  return account
}

export async function requireTeam(store: AuthStore, teamId: string): Promise<Team> {
  const team = await store.getTeam(teamId)
  if (!team) throw new AppError('not_found', `team ${teamId} not found`)
  return team
}
