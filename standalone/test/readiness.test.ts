import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type Logger } from '@lr/proto'
import { installLogger, log } from '@lr/platform/log'
import { REPLACED } from '@lr/platform/sqlite-health'
import { startStandalone } from '@lr/standalone'

// README "Operations", "The store away": /readyz of the process is 503 while a store cannot
// take writes, and 200 again once it can, without a restart.
describe('/readyz of the one-process product on SQLite', () => {
  let dataDir: string
  let product: Awaited<ReturnType<typeof startStandalone>>
  const previous = log()
  const errors: Record<string, unknown>[] = []
  /** The error lines that name a file (not the access log's). */
  const fileErrors = () => errors.filter((line) => 'file' in line)
  const readyz = async () => {
    const res = await product.gateway.handle(new Request('http://localhost/readyz'))
    return [res.status, ((await res.json()) as { checks: unknown }).checks]
  }
  beforeAll(async () => {
    const quiet = () => undefined
    const logger = { error: (fields: object, msg: string) => void errors.push({ ...fields, msg }), warn: quiet, info: quiet, debug: quiet, child: () => logger } as unknown as Logger
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

  it('is 503 once a store file is removed under the process, with one error line naming it', async () => {
    const path = join(dataDir, 'webhooks.sqlite')
    rmSync(path)
    expect(await readyz()).toEqual([503, { stores: false }])
    expect(await readyz()).toEqual([503, { stores: false }])
    expect(fileErrors()).toEqual([{ file: path, msg: REPLACED }])
  })
})
