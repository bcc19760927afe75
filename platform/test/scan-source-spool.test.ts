import { afterEach, beforeEach, describe, expect, it, setSystemTime } from 'bun:test'
import { type ScanEvent, type ScanSource } from '@lr/proto'
import { createBusScanSource } from '@lr/platform/scan-source'
import { openScanBatchSpool } from '@lr/platform/scan-spool'
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { captureLog } from './log-capture'
import { events, useLocalBus } from './scan-pipeline.fixture'

const { bus, handOver } = useLocalBus()

describe('createBusScanSource with a spool on disk', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'lr-source-spool-'))
  })
  afterEach(() => rmSync(dir, { recursive: true, force: true }))

  it('holds what does not fit maxBuffer on disk while the consumer is behind, and applies every scan once, none dropped', async () => {
    const log = captureLog()
    let refusing = true
    const applied: ScanEvent[] = []
    const spool = openScanBatchSpool(dir, { maxBytes: 1 << 24, segmentBytes: 2048 })
    const source = createBusScanSource(bus(), { maxBuffer: 40, retryMs: 10, lingerMs: 0, spool })
    try {
      await source.start(async (scans) => {
        if (refusing) throw new Error('store down')
        applied.push(...(scans as ScanEvent[]))
      })
      for (let n = 1; n <= 1000; n += 10) await handOver(events(n, n + 9))
      // 40 in memory at most (one batch in the consumer's hands besides), the rest on disk.
      expect(spool.size()).toBeGreaterThanOrEqual(1000 - 50)
      expect(readdirSync(dir).length).toBeGreaterThan(1)
      refusing = false
      for (let i = 0; i < 200 && applied.length < 1000; i++) await Bun.sleep(10)
      await source.stop()
      expect(applied.map((scan) => scan.scan_id).sort()).toEqual(events(1, 1000).map((scan) => scan.scan_id).sort())
      expect([spool.size(), spool.bytes(), readdirSync(dir)]).toEqual([0, 0, []])
      expect(log.lines.filter((line) => line.msg.startsWith('scans dropped'))).toEqual([])
      expect(log.lines.filter((line) => line.msg === 'scans waiting beyond the buffer: held on disk until they are applied')).toHaveLength(1)
    } finally {
      log.restore()
    }
  })

  const idsOf = (scans: readonly ScanEvent[]) => scans.map((scan) => scan.scan_id).sort()
  /**
   * Stops `first` (again, if it has stopped: the same stop), then the source of a restarted
   * process (same pid here, so its spool adopts the files as a new process's would) applies
   * what is on disk: the ids of the `expected` scans it applied.
   */
  const appliedAfterRestart = async (first: ScanSource, expected: number) => {
    await first.stop()
    const applied: ScanEvent[] = []
    const next = createBusScanSource(bus(), { lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
    await next.start(async (scans) => void applied.push(...(scans as ScanEvent[])))
    for (let i = 0; i < 100 && applied.length < expected; i++) await Bun.sleep(10)
    await next.stop()
    return idsOf(applied)
  }

  it('writes what it holds at stop, in memory and on disk, to the spool while the store refuses, and the next source applies every scan', async () => {
    const first = createBusScanSource(bus(), { maxBuffer: 10, lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
    await first.start(() => Promise.reject(new Error('store down')))
    // 10 in memory (retried until the stop), 90 on disk already.
    for (let n = 1; n <= 100; n += 10) await handOver(events(n, n + 9))
    expect(await appliedAfterRestart(first, 100)).toEqual(idsOf(events(1, 100)))
  })

  it('says in one line how many scans its stop wrote to the spool', async () => {
    const log = captureLog()
    try {
      const source = createBusScanSource(bus(), { lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
      await source.start(() => Promise.reject(new Error('disk full')))
      for (let n = 1; n <= 30; n += 10) await handOver(events(n, n + 9))
      await source.stop()
      const lines = log.lines.filter((line) => line.msg.includes('stop'))
      expect(lines.map(({ msg, source, spooled }) => ({ msg, source, spooled }))).toEqual([
        { msg: 'scans not applied by the stop: written to the spool on disk, the next start applies them', source: 'analytics', spooled: 30 },
      ])
    } finally {
      log.restore()
    }
  })

  it('stops within stopMs while an apply hangs, and writes that apply\'s batch to the spool too', async () => {
    const first = createBusScanSource(bus(), { lingerMs: 0, stopMs: 50, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
    await first.start(() => new Promise<void>(() => undefined)) // a store that never answers
    await handOver(events(1, 10))
    await Bun.sleep(5)
    await handOver(events(11, 20))
    const started = performance.now()
    await first.stop()
    expect(performance.now() - started).toBeLessThan(1000)
    expect(await appliedAfterRestart(first, 20)).toEqual(idsOf(events(1, 20)))
  })

  it('applies what it holds at stop while the store answers: nothing on disk, no line', async () => {
    const log = captureLog()
    try {
      const applied: ScanEvent[] = []
      const source = createBusScanSource(bus(), { lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
      await source.start(async (scans) => {
        await Bun.sleep(1)
        applied.push(...(scans as ScanEvent[]))
      })
      for (let n = 1; n <= 50; n += 10) await handOver(events(n, n + 9))
      await source.stop()
      expect([idsOf(applied), readdirSync(dir), log.lines.filter((line) => line.msg.includes('stop'))]).toEqual([idsOf(events(1, 50)), [], []])
    } finally {
      log.restore()
    }
  })

  it('says in one error line how many scans its stop dropped when the spool is full', async () => {
    const log = captureLog()
    try {
      // Room for about two of the three batches (a line of ten scans is about 2 KB).
      const source = createBusScanSource(bus(), { lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 4096 }) })
      await source.start(() => Promise.reject(new Error('disk full')))
      for (let n = 1; n <= 30; n += 10) await handOver(events(n, n + 9))
      await source.stop()
      const lines = log.lines.filter((line) => line.msg.includes('stop'))
      const spooled = lines.find((line) => line.msg.startsWith('scans not applied by the stop'))?.spooled ?? 0
      const errors = lines.filter((line) => line.msg === 'scans dropped at stop: the spool on disk could not take them')
      expect(errors.map((line) => [line.dropped, line.spooled])).toEqual([[30 - spooled, spooled]])
      expect(spooled).toBeGreaterThan(0)
      expect(spooled).toBeLessThan(30)
    } finally {
      log.restore()
    }
  })

  it('says in one error line how many scans its stop dropped when the spool\'s disk refuses the write', async () => {
    const log = captureLog()
    const source = createBusScanSource(bus(), { lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
    try {
      await source.start(() => Promise.reject(new Error('disk full')))
      for (let n = 1; n <= 30; n += 10) await handOver(events(n, n + 9))
      // The spool's first file, at the name it will take, is a full disk (DATA_DIR's, where the spool is by default).
      setSystemTime(new Date(1_767_225_600_000))
      symlinkSync('/dev/full', join(dir, `${String(1_767_225_600_000).padStart(15, '0')}-${process.pid}-0.jsonl`))
      await source.stop()
      const lines = log.lines.filter((line) => line.msg.includes('stop'))
      expect(lines.map(({ msg, dropped, spooled, err }) => ({ msg, dropped, spooled, code: err?.message.includes('ENOSPC') }))).toEqual([
        { msg: 'scans dropped at stop: the spool on disk could not take them', dropped: 30, spooled: 0, code: true },
      ])
    } finally {
      setSystemTime()
      log.restore()
    }
  })

  it('says in one error line how many scans its stop dropped when it has no spool', async () => {
    const log = captureLog()
    try {
      const source = createBusScanSource(bus(), { lingerMs: 0 })
      await source.start(() => Promise.reject(new Error('disk full')))
      for (let n = 1; n <= 30; n += 10) await handOver(events(n, n + 9))
      await source.stop()
      expect(log.lines.filter((line) => line.msg.includes('stop')).map(({ msg, dropped }) => ({ msg, dropped }))).toEqual([
        { msg: 'scans dropped at stop: not applied, and no spool on disk to hold them', dropped: 30 },
      ])
    } finally {
      log.restore()
    }
  })

  it('drops only past the spool\'s bound, each counted in a log line; the lines come at most one per 5 s', async () => {
    const log = captureLog()
    const spool = openScanBatchSpool(dir, { maxBytes: 4096, segmentBytes: 1024 })
    const source = createBusScanSource(bus(), { maxBuffer: 10, retryMs: 10, lingerMs: 0, spool })
    try {
      await source.start(() => Promise.reject(new Error('store down')))
      for (let n = 1; n <= 200; n += 10) await handOver(events(n, n + 9))
      const linesOf = (msg: string) => log.lines.filter((line) => line.msg === msg)
      const full = 'scans dropped: the buffer and the spool on disk are full'
      // The first drop at once; the next ones are counted until its 5 s are up (or the stop).
      expect(linesOf(full)).toEqual([expect.objectContaining({ dropped: 10 })])
      expect(spool.bytes()).toBeLessThanOrEqual(4096)
      // Every scan is in memory (the buffer's 10, the batch being retried among them), on disk,
      // or counted as dropped; the stop can spool none of those in memory (the spool is full).
      const inMemory = 10
      await source.stop()
      const dropped = linesOf(full)
      expect(dropped.length).toBe(2) // the stop wrote the rest of the count: several batches' in one line
      const droppedScans = dropped.reduce((sum, line) => sum + line.dropped, 0)
      expect(dropped[1]?.dropped_total).toBe(droppedScans)
      const atStop = linesOf('scans dropped at stop: the spool on disk could not take them').reduce((sum, line) => sum + line.dropped, 0)
      expect(atStop).toBe(inMemory)
      expect(droppedScans + spool.size()).toBe(200 - inMemory)
    } finally {
      log.restore()
    }
  })
})
