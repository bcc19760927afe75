import { afterAll, afterEach, describe, expect, it } from 'bun:test'
import type { NatsConnection } from 'nats'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '@lr/proto'
import { processRecordEvents, recordEventSpoolDir } from '@lr/platform/record-stream'
import { captureLog } from './log-capture'

/** Enough of a connection for the sink to be made: nothing is published in these tests. */
const nc = { jetstream: () => ({}), info: undefined } as unknown as NatsConnection
const MEMORY = 'record events held while JetStream is away stay in memory: their spool directory cannot be written'

describe('where a records or dynamic process holds its record events (processRecordEvents)', () => {
  const root = mkdtempSync(join(tmpdir(), 'lr-event-spool-dir-'))
  afterAll(() => rmSync(root, { recursive: true, force: true }))
  let log: ReturnType<typeof captureLog> | undefined
  afterEach(() => log?.restore())

  it('opens the spool under DATA_DIR and logs nothing', () => {
    log = captureLog()
    const dataDir = join(root, 'writable')
    processRecordEvents(nc, loadConfig({ DATA_DIR: dataDir }), 'records')
    expect(existsSync(recordEventSpoolDir(dataDir, 'records'))).toBe(true)
    expect(log.lines).toEqual([])
  })

  it('logs one warn line naming the directory when DATA_DIR cannot hold it, and holds the events in memory', () => {
    log = captureLog()
    const dataDir = join(root, 'a-file')
    writeFileSync(dataDir, '') // mkdir under it fails, as under a read-only root filesystem
    processRecordEvents(nc, loadConfig({ DATA_DIR: dataDir }), 'dynamic')
    expect(log.lines).toEqual([{ dir: recordEventSpoolDir(dataDir, 'dynamic'), err: expect.objectContaining({ message: expect.stringContaining('ENOTDIR') }), msg: MEMORY }])
  })

  // Root may write anywhere (CAP_DAC_OVERRIDE), so as root the process that opens it runs
  // without that capability: still uid 0, so it reads the checkout however private (a fresh
  // clone under mktemp -d is 0700), but bound by the directory's mode like any other user.
  it('logs the same line when the spool directory exists but is not writable', async () => {
    const dataDir = join(root, 'not-ours')
    const dir = recordEventSpoolDir(dataDir, 'records')
    mkdirSync(dir, { recursive: true })
    const probe = [process.execPath, 'run', join(import.meta.dir, 'record-event-spool.probe.ts'), dataDir]
    const asRoot = process.getuid?.() === 0
    chmodSync(dir, 0o555)
    try {
      const run = Bun.spawn(asRoot ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search', '--', ...probe] : probe, { stdout: 'pipe', stderr: 'pipe' })
      const [out, err] = [await new Response(run.stdout).text(), await new Response(run.stderr).text()]
      expect([await run.exited, err]).toEqual([0, ''])
      expect(JSON.parse(out)).toEqual([[dir, MEMORY]])
    } finally {
      chmodSync(dir, 0o755)
    }
  })
})
