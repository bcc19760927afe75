import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type Logger, type ScanEvent } from '@lr/proto'
import { installLogger, log } from '@lr/platform/log'
import { REPLACED } from '@lr/platform/sqlite-health'
import { startStandalone } from '@lr/standalone'
import { waitUntil } from '../../test/harness/ports'

/** A scan as the resolver hands it on (a browser's: a bot's is not written). */
const scan = (n: number): ScanEvent => ({
  scan_id: `0190a000-0000-7000-8000-${String(n).padStart(12, '0')}`, code: 'Code0001', scanned_at: Date.now(), visitor_id: 'a'.repeat(64), country: 'DE',
  user_agent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
})
/** Scans written in the analytics file, read as another process would. */
function scansIn(dataDir: string): number {
  const db = new Database(join(dataDir, 'analytics.sqlite'), { readonly: true })
  try {
    return db.query<{ n: number }, []>('SELECT count(*) AS n FROM scans').get()!.n
  } finally {
    db.close()
  }
}

// README "Operations", "The store away": /readyz of the process is 503 while a store cannot
// take writes, and 200 again once it can, without a restart.
describe('/readyz of the one-process product on SQLite', () => {
  let dataDir: string
  let product: Awaited<ReturnType<typeof startStandalone>>
  const previous = log()
  const errors: Record<string, unknown>[] = []
  const warnings: Record<string, unknown>[] = []
  /** The error lines that name a file (not the access log's). */
  const fileErrors = () => errors.filter((line) => 'file' in line)
  const readyz = async () => {
    const res = await product.gateway.handle(new Request('http://localhost/readyz'))
    return [res.status, ((await res.json()) as { checks: unknown }).checks]
  }
  beforeAll(async () => {
    const quiet = () => undefined
    const logger = { error: (fields: object, msg: string) => void errors.push({ ...fields, msg }), warn: (fields: object, msg: string) => void warnings.push({ ...fields, msg }), info: quiet, debug: quiet, child: () => logger } as unknown as Logger
    installLogger(logger)
    dataDir = mkdtempSync(join(tmpdir(), 'lr-readiness-'))
    product = await startStandalone(loadConfig({ DATA_DIR: dataDir, TRANSPORT: 'memory' }))
  })
  afterAll(async () => {
    await product?.stop()
    installLogger(previous)
    rmSync(dataDir, { recursive: true, force: true })
  })

  it('is 503 while another process holds a store write-locked, and 200 again once it lets go', async () => {
    expect(await readyz()).toEqual([200, { stores: true }])
    const other = new Database(join(dataDir, 'records.sqlite'))
    try {
      other.exec('BEGIN EXCLUSIVE')
      expect(await readyz()).toEqual([503, { stores: false }])
      other.exec('ROLLBACK')
      expect(await readyz()).toEqual([200, { stores: true }])
    } finally {
      other.close()
    }
  })

  // Analytics' scans are written by the ingestion Worker, on a connection of its own: its failed
  // write had come back as bare text, so the store stayed ready (its lock probe is off, the
  // Worker holding the lock a batch long) while no scan could be written.
  it("is 503 once the ingestion Worker's write fails as the store's own would (SQLITE_BUSY: another process holds the lock), and 200 again once the store takes writes", async () => {
    const other = new Database(join(dataDir, 'analytics.sqlite'))
    try {
      other.exec('BEGIN IMMEDIATE')
      expect(await readyz()).toEqual([200, { stores: true }]) // not probed: the Worker's own lock would look the same
      product.scans.publish(scan(1))
      // The Worker's busy timeout (5 s), then its batch fails.
      await waitUntil(async () => (await readyz())[0] === 503, 15_000, 'the failed batch to make the store unready')
      expect(await readyz()).toEqual([503, { stores: false }])
      expect(warnings.filter((line) => line.msg === 'store unreachable')).toEqual([
        expect.objectContaining({ store: 'analytics', operation: 'applyScans', err: expect.objectContaining({ type: 'SQLiteError', code: 'SQLITE_BUSY' }) }),
      ])
      other.exec('ROLLBACK')
      expect(await readyz()).toEqual([200, { stores: true }])
      await waitUntil(async () => (await product.gateway.handle(new Request('http://localhost/readyz'))).status === 200 && scansIn(dataDir) === 1, 10_000, 'the scan written once the lock is gone')
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK')
      other.close()
    }
  }, 30_000)

  it('is 503 once a store file is removed under the process, with one error line naming it', async () => {
    const path = join(dataDir, 'webhooks.sqlite')
    rmSync(path)
    expect(await readyz()).toEqual([503, { stores: false }])
    expect(await readyz()).toEqual([503, { stores: false }])
    expect(fileErrors()).toEqual([{ file: path, msg: REPLACED }])
  })
})
