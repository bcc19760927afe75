import type { Stack } from './stack'

let counter = 0
const email = (who: string) => `${who}-${Date.now()}-${++counter}@example.test`

/** An account with a key, as the admin command line makes them. */
export interface Member {
  account_id: string
  key: string
  key_id: string
}

export interface Libraries {
  /** A Pro account's personal library. */
  alice: Member
  /** Another personal library. */
  bob: Member
  /** The team's admin, with a business key. */
  teamAdmin: Member
  /** A writer of the same team, with a business key. */
  teamWriter: Member
  /** The admin's personal key (a different library from the team's). */
  adminPersonal: Member
  team_id: string
}

export async function account(stack: Stack, who: string, tier: string) {
  return stack.admin('account', 'create', '--email', email(who), '--tier', tier) as Promise<{ account_id: string }>
}

export async function personalKey(stack: Stack, account_id: string): Promise<Member> {
  const key = await stack.admin('key', 'create', '--account', account_id, '--scope', 'personal')
  return { account_id, key: key.key, key_id: key.key_id }
}

export async function businessKey(stack: Stack, account_id: string, team_id: string): Promise<Member> {
  const key = await stack.admin('key', 'create', '--account', account_id, '--scope', 'business', '--team', team_id)
  return { account_id, key: key.key, key_id: key.key_id }
}

/** Two personal libraries and one team library with an admin and a writer. */
export async function seedLibraries(stack: Stack): Promise<Libraries> {
  const [alice, bob, boss, writer] = await Promise.all([
    account(stack, 'alice', 'pro'),
    account(stack, 'bob', 'advanced'),
    account(stack, 'boss', 'business'),
    account(stack, 'writer', 'advanced'),
  ])
  const team = await stack.admin('team', 'create', '--name', 'Marketing', '--admin', boss.account_id)
  await stack.admin('team', 'add-member', '--team', team.team_id, '--account', writer.account_id, '--role', 'writer')
  const [aliceKey, bobKey, adminKey, writerKey, adminPersonal] = await Promise.all([
    personalKey(stack, alice.account_id),
    personalKey(stack, bob.account_id),
    businessKey(stack, boss.account_id, team.team_id),
    businessKey(stack, writer.account_id, team.team_id),
    personalKey(stack, boss.account_id),
  ])
  return { alice: aliceKey, bob: bobKey, teamAdmin: adminKey, teamWriter: writerKey, adminPersonal, team_id: team.team_id }
}

/** A new personal library of its own, for tests that need an empty one. */
export async function freshMember(stack: Stack): Promise<Member> {
  const { account_id } = await account(stack, 'fresh', 'pro')
  return personalKey(stack, account_id)
}
