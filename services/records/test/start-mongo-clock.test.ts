import { describe, expect, it, setSystemTime } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, RECORDS_SUBJECTS as S, type StaticRecord } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { startRecords } from '../src/start'
import { freshDatabase, mongoSkipReason, useMongoServer } from '../../../test/harness/ferretdb'
import { personal } from './fixtures'

// On MongoDB the records service stamps created_at and updated_at by the database server's clock
// (LibraryStore.now, platform/src/mongo-clock.ts): replicas whose own clocks disagree never write
// an older updated_at after a newer one, which the list of changes' `updated_since` recipe would miss.
const skip = mongoSkipReason()
describe.skipIf(Boolean(skip))('the records service on MongoDB, in a process whose clock is wrong', () => {
  const url = useMongoServer()

  it('stamps created_at and updated_at by the database server\'s clock', async () => {
    const db = await freshDatabase(url(), 'lr_records_clock_test')
    const dataDir = mkdtempSync(join(tmpdir(), 'lr-records-clock-'))
    const bus = createLocalBus()
    const config = loadConfig({ STORE: 'mongo', MONGODB_URL: url(), DATA_DIR: dataDir })
    const running = await startRecords({ bus, config, mongo: db.conn }, { events: async () => undefined })
    try {
      // FerretDB runs on this machine, on its real clock; this process's runs an hour behind.
      const real = Math.floor(Date.now() / 1000)
      setSystemTime(new Date(Date.now() - 3_600_000))
      let created: StaticRecord
      let updated: StaticRecord
      try {
        created = (await bus.request<{ created: StaticRecord[] }>(S.create, { principal: personal, body: { url: 'https://example.com/', name: 'Menu' } })).created[0]!
        updated = await bus.request<StaticRecord>(S.update, { principal: personal, id: created.qr_id, body: { name: 'Lunch' } })
      } finally {
        setSystemTime()
      }
      expect(Math.abs(created.created_at - real)).toBeLessThanOrEqual(2)
      expect(Math.abs(updated.updated_at - real)).toBeLessThanOrEqual(2)
    } finally {
      await running.stop()
      await bus.close()
      await db.cleanup()
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
