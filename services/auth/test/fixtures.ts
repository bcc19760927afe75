import type { Database } from 'bun:sqlite'
import type { Account, TeamRole, Tier } from '@lr/proto'
import { openSqlite } from '@lr/platform/sqlite'
import { createSqliteAuthStore } from '../src/adapters/auth-store.sqlite'
import type { AuthStore } from '../src/ports'
import { type AuthService, createAuthService } from '../src/service'

export const T0 = 1_700_000_000
export { rejection } from './rejection'

export interface World {
  db: Database
  store: AuthStore
  service: AuthService
  /** The injected clock, epoch seconds; tests move it. */
  clock: { now: number }
  account(tier?: Tier, email?: string): Promise<Account>
  /** A team whose admin is a fresh business account. */
  team(): Promise<{ team_id: string; admin: Account }>
  member(teamId: string, role: TeamRole, tier?: Tier): Promise<Account>
}

/** The auth service over a fresh in-memory SQLite store, with a clock the test controls. */
export function world({ activationDelayS = 0 } = {}): World {
  const db = openSqlite(':memory:')
  const store = createSqliteAuthStore(db)
  const clock = { now: T0 }
  const service = createAuthService({ store, now: () => clock.now, activationDelayS })
  let n = 0
  const account = (tier: Tier = 'pro', email = `user${++n}@example.com`) => service.accountCreate({ email, tier })
  return {
    db, store, service, clock, account,
    async team() {
      const admin = await account('business')
      const { team_id } = await service.teamCreate({ name: 'Library team', admin: admin.account_id })
      return { team_id, admin }
    },
    async member(teamId, role, tier = 'pro') {
      const a = await account(tier)
      await service.teamAddMember({ team_id: teamId, account_id: a.account_id, role })
      return a
    },
  }
}
