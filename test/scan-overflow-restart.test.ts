import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type ScanEvent, scanBatchOf } from '@lr/proto'
import { createLogger, installLogger } from '@lr/platform/log'
import { captureLog } from '@lr/platform/testing/log-capture'
import { startStandalone } from '@lr/standalone'
import { adminOf } from './harness/stack'
import { waitUntil } from './harness/ports'

/** A pid no process has: the files it left are adopted. */
const GONE = 2 ** 22 + 54_321

/**
 * One process (`bun start`): scans its analytics could not take in memory wait on disk, under
 * SCAN_SPOOL_DIR (default `$DATA_DIR/scan-spool`), and a process started after a crash applies
 * what an earlier one left there (platform/src/scan-source.ts, spool). A graceful stop writes
 * there what analytics could not apply in time.
 */
describe('one process: scans held on disk', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'lr-spool-restart-'))
  const spoolDir = join(dataDir, 'scan-spool', 'analytics')
  const env = { ...(Bun.env as Record<string, string>), TRANSPORT: 'memory', DATA_DIR: dataDir, PORT: '0', SHORT_PORT: '0', RESOLVER_THREADS: '0', SHORT_BASE_URL: 'http://short.test' }
  installLogger(createLogger('standalone', 'warn'))
  let key = ''
  type Product = Awaited<ReturnType<typeof startStandalone>>
  const api = async (product: Product, method: string, path: string, body?: unknown): Promise<any> =>
    (await product.gateway.handle(new Request(`http://localhost${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }))).json()
  /** A new dynamic code, made through the API of a product started and stopped for it. */
  const newCode = async (): Promise<string> => {
    const product = await startStandalone(loadConfig(env))
    try {
      return (await api(product, 'POST', '/v1/dynqrcodes', { destination_url: 'https://example.com/menu', name: 'Menu' })).created[0].code
    } finally {
      await product.stop()
    }
  }
  const scan = (code: string, n: number): ScanEvent => ({ scan_id: `0193b0a2-7c1e-7d3a-9f00-${String(n).padStart(12, '0')}`, code, scanned_at: Date.now() - 60_000 + n, user_agent: 'curl/8.5.0', visitor_id: `${n}`.padStart(64, 'a'), country: 'DE' })
  /** Starts the next process and waits for it to count `total` scans of `code`; the spool is then empty. */
  const countedByNextProcess = async (code: string, total: number) => {
    const product = await startStandalone(loadConfig(env))
    try {
      await waitUntil(async () => (await api(product, 'GET', `/v1/dynqrcodes/${code}/analytics`)).total_scans === total, 10_000, `the ${total} scans held on disk to be counted`)
      expect(readdirSync(spoolDir)).toEqual([])
    } finally {
      await product.stop()
    }
  }

  beforeAll(async () => {
    const { admin } = adminOf(env)
    const { account_id } = await admin('account', 'create', '--email', 'spool@example.com', '--tier', 'pro')
    key = (await admin('key', 'create', '--account', account_id, '--scope', 'personal')).key
  })
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('are applied by the next process: a crash while behind loses none of them', async () => {
    const code = await newCode()
    // What a process that crashed while behind left: two batches, five scans.
    const lines = [scanBatchOf([scan(code, 1), scan(code, 2)]), scanBatchOf([scan(code, 3), scan(code, 4), scan(code, 5)])].map((batch) => `${batch.count}\t${batch.codes}\t${batch.events}\n`).join('')
    mkdirSync(spoolDir, { recursive: true })
    writeFileSync(join(spoolDir, `000001767225600000-${GONE}-0.jsonl`), lines)
    await countedByNextProcess(code, 5)
  }, 30_000)

  it('are written there by a graceful stop while analytics cannot write, said in one line, and applied by the next process', async () => {
    const code = await newCode()
    const product = await startStandalone(loadConfig(env))
    // Another connection holds the write lock of analytics' file: its writes wait out their busy timeout and fail.
    const lock = new Database(join(dataDir, 'analytics.sqlite'))
    lock.exec('BEGIN IMMEDIATE')
    const log = captureLog()
    try {
      for (let n = 1; n <= 1_000; n++) product.scans.publish(scan(code, 100 + n))
      await product.scans.flush()
      await Bun.sleep(50)
      await product.stop()
    } finally {
      log.restore()
      lock.exec('ROLLBACK')
      lock.close()
    }
    const stopLines = log.lines.filter((line) => line.msg.includes('stop'))
    expect(stopLines.map(({ msg, source, spooled }) => ({ msg, source, spooled }))).toEqual([
      { msg: 'scans not applied by the stop: written to the spool on disk, the next start applies them', source: 'analytics', spooled: 1_000 },
    ])
    await countedByNextProcess(code, 1_000)
  }, 60_000)
})
