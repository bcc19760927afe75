import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'bun:test'
import { connect, type JetStreamManager, type NatsConnection } from 'nats'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { recordEventsLost } from '@lr/platform/metrics'
import { EVENT_SPOOL_BACK, EVENT_SPOOL_FAILED, type HeldEvents, heldEventsWeight, type LostCause, RECORD_EVENTS_LOST } from '@lr/platform/record-event-hold'
import { createJetStreamRecordEvents } from '@lr/platform/record-stream'
import { openJsonSpool } from '@lr/platform/scan-spool'
import { startNats, type NatsServer } from '../../test/harness/nats'
import { waitUntil } from '../../test/harness/ports'
import { skipReason } from '../../test/harness/servers'
import { captureLog } from './log-capture'
import { eventIds, paddedEvent, refuseRecordEvents, storedEventIds, takeRecordEvents } from './record-event-stream.fixture'

const lostSoFar = async (cause: LostCause) => (await recordEventsLost.get()).values.find((v) => v.labels.cause === cause)?.value ?? 0
/** Batches written in the spool's files. */
const linesIn = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.jsonl')).flatMap((n) => readFileSync(join(dir, n), 'utf8').split('\n').filter((l) => l !== ''))

// Records and dynamic hold the record events JetStream did not take in a spool on disk
// (README "Operations", "NATS away"); here that spool's own writes and reads fail.
const skip = skipReason('nats-server')
if (skip) describe.skip(`the record event spool failing (${skip})`, () => {})
else
  describe('the record event spool failing (real nats-server -js)', () => {
    let server: NatsServer
    let nc: NatsConnection
    let jsm: JetStreamManager
    let root: string
    let log: ReturnType<typeof captureLog>
    beforeAll(async () => {
      server = await startNats({ jetstream: true })
      nc = await connect({ servers: server.url })
      jsm = await nc.jetstreamManager()
    })
    afterAll(async () => {
      await nc?.close()
      await server?.stop()
    })
    beforeEach(async () => {
      root = mkdtempSync(join(tmpdir(), 'lr-event-spool-failure-'))
      await refuseRecordEvents(jsm)
      log = captureLog()
    })
    afterEach(async () => {
      log.restore()
      await Bun.sleep(100) // a retry under way ends before its spool goes
      rmSync(root, { recursive: true, force: true })
    })
    const sinkOn = (dir: string, maxBytes = 1 << 24, reportMs = 60_000) =>
      createJetStreamRecordEvents(nc, { timeoutMs: 500, retryMs: 50, probeMs: 50, reportMs, spool: openJsonSpool<HeldEvents>(dir, { maxBytes }, heldEventsWeight) })
    const lines = (msg: string) => log.lines.filter((line) => line.msg === msg)

    it('a spool whose files refuse their writes (a full disk) costs no event in a records process: every write is answered, every event published in order, the process goes on, and the error lines are few', async () => {
      const N = 300
      const probe = ['bun', 'run', join(import.meta.dir, 'record-event-spool-failure.probe.ts'), server.url, root, String(N)]
      // SIGXFSZ ignored, so a write past the limit fails (EFBIG) instead of killing the process.
      const run = Bun.spawn(['bash', '-c', `trap '' XFSZ; ulimit -f 64; exec "$@"`, 'bash', ...probe], { env: { ...Bun.env, BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0' }, stdout: 'pipe', stderr: 'pipe' })
      const [out, err] = [await new Response(run.stdout).text(), await new Response(run.stderr).text()]
      expect([await run.exited, err]).toEqual([0, ''])
      const logged = out.trim().split('\n').map((line) => JSON.parse(line))
      // Before, each failed write rejected the sink (the write logged it) and its events were gone, uncounted.
      expect(logged.at(-1).settled).toEqual({ rejected: 0, lost: 0, stored: eventIds(1, N) })
      const failures = logged.filter((line) => line.msg === EVENT_SPOOL_FAILED)
      expect(failures.length).toBeGreaterThanOrEqual(1)
      expect(failures.length).toBeLessThan(5)
      expect(failures.every((line) => line.level === 'error' && line.process === 'records' && line.err.code === 'EFBIG')).toBe(true)
      expect(logged.filter((line) => line.msg === RECORD_EVENTS_LOST)).toEqual([])
    }, 40_000)

    it('a spool directory that cannot be written: the events wait in memory (one error line), go to the spool once a probe finds it writable, and are all published in order', async () => {
      const dir = join(root, 'spool')
      const sink = sinkOn(dir)
      rmSync(dir, { recursive: true })
      writeFileSync(dir, '') // a file where the directory was: no file can be made in it (ENOTDIR)
      for (let n = 1; n <= 30; n++) await sink(paddedEvent(n)) // each answered: the write it follows is stored
      await Bun.sleep(200) // probes fail meanwhile, silently
      expect(lines(EVENT_SPOOL_FAILED)).toEqual([expect.objectContaining({ repeated: 0, err: expect.objectContaining({ code: 'ENOTDIR' }) })])

      rmSync(dir)
      await waitUntil(() => lines(EVENT_SPOOL_BACK).length === 1, 2_000, 'a probe to find the spool writable again')
      expect(linesIn(dir)).toHaveLength(30) // what memory held, now on disk: a stop loses none of it
      for (let n = 31; n <= 40; n++) await sink(paddedEvent(n))
      await takeRecordEvents(jsm)
      await waitUntil(async () => (await storedEventIds(jsm)).length >= 40, 10_000, 'the held events in the stream')
      expect(await storedEventIds(jsm)).toEqual(eventIds(1, 40))
      expect(lines(RECORD_EVENTS_LOST)).toEqual([])
    }, 20_000)

    it('a spool file removed by hand while it holds events: they are counted lost in one line, and the process goes on publishing the others (before, an unhandled rejection ended it)', async () => {
      const dir = join(root, 'spool')
      const sink = sinkOn(dir)
      const unreadableBefore = await lostSoFar('unreadable')
      for (let n = 1; n <= 5; n++) await sink(paddedEvent(n))
      rmSync(dir, { recursive: true })
      await waitUntil(() => lines(RECORD_EVENTS_LOST).length === 1, 2_000, 'the lost events counted')
      expect(lines(RECORD_EVENTS_LOST)).toEqual([expect.objectContaining({ lost: 5, cause: 'unreadable', err: expect.objectContaining({ code: 'ENOENT' }) })])
      expect((await lostSoFar('unreadable')) - unreadableBefore).toBe(5)
      for (let n = 6; n <= 8; n++) await sink(paddedEvent(n))
      await takeRecordEvents(jsm)
      await waitUntil(async () => (await storedEventIds(jsm)).length >= 3, 10_000, 'the later events in the stream')
      expect(await storedEventIds(jsm)).toEqual(eventIds(6, 8))
    }, 20_000)

    it('a spool at its bound (SCAN_SPOOL_MAX_MB): the events past it are lost, counted, and summed in few lines', async () => {
      const sink = sinkOn(join(root, 'spool'), 5_000, 100)
      const fullBefore = await lostSoFar('spool_full')
      for (let n = 1; n <= 10; n++) await sink(paddedEvent(n))
      await waitUntil(async () => (await lostSoFar('spool_full')) - fullBefore === 6, 2_000, 'the events past the bound counted')
      await waitUntil(() => lines(RECORD_EVENTS_LOST).reduce((sum, line) => sum + line.lost, 0) === 6, 2_000, 'every lost event in a line')
      expect(lines(RECORD_EVENTS_LOST).length).toBeLessThanOrEqual(2)
      expect(lines(RECORD_EVENTS_LOST).every((line) => line.cause === 'spool_full')).toBe(true)
      await takeRecordEvents(jsm)
      await waitUntil(async () => (await storedEventIds(jsm)).length >= 4, 10_000, 'the spooled events in the stream')
      expect(await storedEventIds(jsm)).toEqual(eventIds(1, 4))
    }, 20_000)
  })
