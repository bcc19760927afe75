import { afterAll, describe, expect, it } from 'bun:test'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type ScanEvent, scanBatchOf } from '@lr/proto'
import { createLogger, installLogger } from '@lr/platform/log'
import { startStandalone } from '@lr/standalone'
import { adminOf } from './harness/stack'
import { waitUntil } from './harness/ports'

/** A pid no process has: the files it left are adopted. */
const GONE = 2 ** 22 + 54_321

/**
 * One process (`bun start`): scans its analytics could not take in memory wait on disk, under
 * SCAN_SPOOL_DIR (default `$DATA_DIR/scan-spool`), and a process started after a crash applies
 * what an earlier one left there (platform/src/scan-source.ts, spool).
 */
describe('one process: scans held on disk', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'lr-spool-restart-'))
  const env = { ...(Bun.env as Record<string, string>), TRANSPORT: 'memory', DATA_DIR: dataDir, PORT: '0', SHORT_PORT: '0', RESOLVER_THREADS: '0', SHORT_BASE_URL: 'http://short.test' }
  installLogger(createLogger('standalone', 'warn'))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  it('are applied by the next process: a crash while behind loses none of them', async () => {
    let product = await startStandalone(loadConfig(env))
    const { admin } = adminOf(env)
    const { account_id } = await admin('account', 'create', '--email', 'spool@example.com', '--tier', 'pro')
    const { key } = await admin('key', 'create', '--account', account_id, '--scope', 'personal')
    const api = async (method: string, path: string, body?: unknown): Promise<any> =>
      (await product.gateway.handle(new Request(`http://localhost${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }))).json()
    const { code } = (await api('POST', '/v1/dynqrcodes', { destination_url: 'https://example.com/menu', name: 'Menu' })).created[0]
    await product.stop()

    // What a process that crashed while behind left: two batches, five scans.
    const scan = (n: number): ScanEvent => ({ scan_id: `0193b0a2-7c1e-7d3a-9f00-${String(n).padStart(12, '0')}`, code, scanned_at: Date.now() - 60_000 + n, user_agent: 'curl/8.5.0', visitor_id: `${n}`.padStart(64, 'a'), country: 'DE' })
    const lines = [scanBatchOf([scan(1), scan(2)]), scanBatchOf([scan(3), scan(4), scan(5)])].map((batch) => `${batch.count}\t${batch.codes}\t${batch.events}\n`).join('')
    const spoolDir = join(dataDir, 'scan-spool', 'analytics')
    mkdirSync(spoolDir, { recursive: true })
    writeFileSync(join(spoolDir, `000001767225600000-${GONE}-0.jsonl`), lines)

    product = await startStandalone(loadConfig(env))
    try {
      await waitUntil(async () => (await api('GET', `/v1/dynqrcodes/${code}/analytics`)).total_scans === 5, 10_000, 'the five scans held on disk to be counted')
      expect(readdirSync(spoolDir)).toEqual([])
    } finally {
      await product.stop()
    }
  }, 30_000)
})
