import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { scansLost } from '@lr/platform/metrics'
import { openScanSpool } from '@lr/platform/scan-spool'
import { SPOOL_FAILED } from '@lr/platform/scan-spool-guard'
import { createJetStreamScanPublisher } from '@lr/platform/scan-stream-publisher'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { captureLog } from './log-capture'
import { ids, range, useScanStreams } from './scan-streams.fixture'

const lostSoFar = async () => (await scansLost.get()).values[0]?.value ?? 0

// The resolver's spool when its own writes fail (README "A broker outage costs no scan").
const skip = skipReason('nats-server')
if (skip) describe.skip(`the resolver's scan spool failing (${skip})`, () => {})
else
  describe("the resolver's scan spool failing (real nats-server -js)", () => {
    const streams = useScanStreams()
    let root: string
    beforeEach(() => void (root = mkdtempSync(join(tmpdir(), 'lr-spool-failure-'))))
    afterEach(() => rmSync(root, { recursive: true, force: true }))

    it('a spool whose files refuse their writes (a full disk) costs only the scans of each failed write: the process goes on, every scan is published, lost or dropped and counted, and the error lines are few, each with a count', async () => {
      const N = 5000
      const dir = join(root, 'spool')
      const probe = ['bun', 'run', join(import.meta.dir, 'scan-spool-failure.probe.ts'), streams.server.url, dir, String(N)]
      // SIGXFSZ ignored, so a write past the limit fails (EFBIG) instead of killing the process.
      const run = Bun.spawn(['bash', '-c', `trap '' XFSZ; ulimit -f 64; exec "$@"`, 'bash', ...probe], {
        env: { ...Bun.env, BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0' },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [out, err] = [await new Response(run.stdout).text(), await new Response(run.stderr).text()]
      // Before, the first failed write of a turn (its flush, in a setImmediate) ended the process: exit 1.
      expect([await run.exited, err]).toEqual([0, ''])
      const lines = out.trim().split('\n').map((line) => JSON.parse(line))
      const { settled } = lines.at(-1)
      const stored = (await streams.storedScans()).length
      expect(settled.pending).toBe(0)
      expect(settled.lost).toBeGreaterThan(0)
      expect(stored + settled.lost + settled.dropped).toBe(N)
      const failures = lines.filter((line) => line.msg === SPOOL_FAILED)
      expect(failures.length).toBeGreaterThanOrEqual(1)
      expect(failures.length).toBeLessThan(10)
      expect(failures.every((line) => line.level === 'error' && line.process === 'resolver' && line.err.type === 'Error' && line.err.code === 'EFBIG')).toBe(true)
      expect(failures.reduce((sum, line) => sum + line.lost, 0)).toBe(settled.lost)
      expect(failures.at(-1).lost_total).toBe(settled.lost)
    }, 40_000)

    it('a spool directory that cannot be written: publish never throws (the redirect is answered), the scan is lost and counted in one line, later scans wait in memory and keepsScans() is false, until a probe finds it writable again', async () => {
      const { server } = streams
      const dir = join(root, 'spool')
      const spool = openScanSpool(dir, { maxBytes: 1 << 24 })
      const publisher = createJetStreamScanPublisher(streams.nc, { maxBuffer: 1000, timeoutMs: 500, retryMs: 50, spool, spoolGuard: { probeMs: 50, reportMs: 60_000 } })
      const log = captureLog()
      const lostBefore = await lostSoFar()
      try {
        await server.down()
        await Bun.sleep(100) // the client notices the closed socket
        rmSync(dir, { recursive: true })
        writeFileSync(dir, '') // a file where the directory was: no file can be made in it (ENOTDIR)
        for (const scan of range(1, 300)) publisher.publish(scan)
        await Bun.sleep(20) // the end of the turn
        expect([publisher.keepsScans(), publisher.pending(), publisher.dropped(), (await lostSoFar()) - lostBefore]).toEqual([false, 299, 0, 1])
        const failures = log.lines.filter((line) => line.msg === SPOOL_FAILED)
        expect(failures).toEqual([expect.objectContaining({ lost: 1, lost_total: 1, err: expect.objectContaining({ message: expect.stringContaining('ENOTDIR') }) })])
        // Still failing: its probes cannot make the directory.
        await Bun.sleep(200)
        expect(publisher.keepsScans()).toBe(false)

        rmSync(dir)
        await waitUntil(() => publisher.keepsScans(), 2_000, 'a probe to find the spool writable again')
        expect(log.lines.filter((line) => line.msg === 'the scan spool on disk takes writes again')).toEqual([expect.objectContaining({ lost_total: 1 })])
        for (const scan of range(301, 400)) publisher.publish(scan)
        await Bun.sleep(20)
        expect(spool.size()).toBe(100) // the outage's scans go to the spool again
        await server.up()
        await waitUntil(() => publisher.pending() === 0, 20_000, 'the held scans to be published')
        expect(ids(await streams.storedScans()).sort()).toEqual(ids([...range(2, 300), ...range(301, 400)]).sort())
      } finally {
        publisher.close()
        log.restore()
      }
    }, 40_000)
  })
