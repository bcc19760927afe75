import { describe, expect, it, setSystemTime } from 'bun:test'
import { type Account, AUTH_SUBJECTS, type CreatedKey, loadConfig } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { startAuth } from '../src/start'
import { rejection } from './rejection'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../../test/harness/ferretdb'

// On MongoDB the auth service reads time by the database server's clock (AuthStore.now,
// platform/src/mongo-clock.ts): every auth replica judges a key's activation delay and an
// account's API grant alike, however their own clocks disagree.
const skip = mongoSkipReason()
describe.skipIf(Boolean(skip))('the auth service on MongoDB, in a process whose clock is wrong', () => {
  const url = useMongoServer()

  it('stamps and judges times by the database server\'s clock', async () => {
    const db = await freshDatabase(url(), 'lr_auth_clock_test')
    const bus = createLocalBus()
    const config = loadConfig({ STORE: 'mongo', MONGODB_URL: url(), KEY_ACTIVATION_DELAY_S: '60' })
    const running = await startAuth({ bus, config, mongo: db.conn })
    try {
      // FerretDB runs on this machine, on its real clock; this process's runs an hour behind.
      const real = Math.floor(Date.now() / 1000)
      setSystemTime(new Date(Date.now() - 3_600_000))
      let account: Account
      try {
        account = await bus.request<Account>(AUTH_SUBJECTS.accountCreate, { email: 'ada@example.com', tier: 'pro' })
      } finally {
        setSystemTime()
      }
      expect(Math.abs(account.created_at - real)).toBeLessThanOrEqual(2)

      // A key made now works a minute from now, by the server's clock: not yet, even for a process an hour ahead.
      const key = await bus.request<CreatedKey>(AUTH_SUBJECTS.keyCreate, { account_id: account.account_id, scope: 'personal' })
      setSystemTime(new Date(Date.now() + 3_600_000))
      try {
        expect((await rejection(bus.request(AUTH_SUBJECTS.verify, { key: key.key }))).message).toContain('not active yet')
      } finally {
        setSystemTime()
      }
    } finally {
      await running.stop()
      await bus.close()
      await db.cleanup()
    }
  })
})
