import { afterEach, beforeEach, describe, expect, it, setSystemTime } from 'bun:test'
import { type Bus, SCAN_BATCH_EVENT, type ScanBatch, scanBatchOf } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { createBusScanPublisher } from '@lr/platform/scan-publisher'
import { createBusScanSource } from '@lr/platform/scan-source'
import { openScanBatchSpool } from '@lr/platform/scan-spool'
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ScanEvent, ScanSource } from '@lr/proto'
import { captureLog } from './log-capture'

const event = (n: number, code = 'Code0001'): ScanEvent => ({
  scan_id: `scan-${n}`, code, scanned_at: 1_736_510_400_000 + n, user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE',
})
const events = (from: number, to: number, code = 'Code0001') => Array.from({ length: to - from + 1 }, (_, i) => event(from + i, code))

let bus: Bus
beforeEach(() => {
  bus = createLocalBus()
})
afterEach(() => bus.close())

describe('createBusScanPublisher', () => {
  it('publishes the scans of one turn as one batch on scan-batches, and each on scans.<code> to whoever subscribes there', async () => {
    const each: [string, unknown][] = []
    const batches: unknown[] = []
    bus.subscribe('scans.>', (e, subject) => void each.push([subject, e]))
    bus.subscribe(SCAN_BATCH_EVENT, (batch) => void batches.push(batch))
    const publisher = createBusScanPublisher(bus)
    const scans = [event(1, 'AbcDef12'), event(2, 'XyzUvw34'), event(3, 'AbcDef12')]
    for (const scan of scans) publisher.publish(scan)
    expect(publisher.pending()).toBe(3)
    await publisher.flush()
    await Bun.sleep(0)
    expect(batches).toEqual([{ events: JSON.stringify(scans), codes: 'AbcDef12 XyzUvw34', count: 3 }])
    expect(each).toEqual(scans.map((scan) => [`scans.${scan.code}`, scan]))
    expect(publisher.pending()).toBe(0)
  })

  it('reads a batch only for the codes someone listens to: the text of a batch no one listens to per scan passes on unread', async () => {
    const each: unknown[] = []
    const batches: ScanBatch[] = []
    bus.subscribe('scans.Listened', (e) => void each.push(e))
    bus.subscribe(SCAN_BATCH_EVENT, (batch) => void batches.push(batch as ScanBatch))
    const log = captureLog()
    try {
      const publisher = createBusScanPublisher(bus)
      publisher.publishBatch(scanBatchOf([event(1, 'Listened'), event(2, 'Other123'), event(3, 'Listened')]))
      // Text that is no JSON at all: never parsed, since nobody subscribed to scans.Unheard1.
      publisher.publishBatch({ events: 'not json', codes: 'Unheard1', count: 1 })
      await publisher.flush()
      await Bun.sleep(0)
      expect(each).toEqual([event(1, 'Listened'), event(3, 'Listened')])
      expect(batches.map((batch) => batch.events)).toEqual([JSON.stringify([event(1, 'Listened'), event(2, 'Other123'), event(3, 'Listened')]), 'not json'])
      expect(log.lines).toEqual([])
    } finally {
      log.restore()
    }
  })

  it('never throws, even when the bus fails', async () => {
    const broken = { ...bus, publish: () => Promise.reject(new Error('down')) }
    const publisher = createBusScanPublisher(broken)
    const log = captureLog()
    try {
      expect(() => publisher.publish(event(1))).not.toThrow()
      expect(() => publisher.publishBatch({ events: 'not json', codes: 'Code0001', count: 1 })).not.toThrow()
      await publisher.flush()
      expect(publisher.pending()).toBe(0)
      expect(log.lines.map((line) => [line.msg, line.scans])).toContainEqual(['scans not published', 1])
    } finally {
      log.restore()
    }
  })
})

describe('createBusScanSource', () => {
  const handOver = (scans: ScanEvent[]) => bus.publish(SCAN_BATCH_EVENT, scanBatchOf(scans))

  it('applies the batches of the bus, up to maxBatch scans a call, in order', async () => {
    const applied: unknown[][] = []
    const source = createBusScanSource(bus, { maxBatch: 4 })
    await source.start(async (scans) => void applied.push(scans))
    const publisher = createBusScanPublisher(bus)
    for (const batch of [events(1, 2), events(3, 4), events(5, 5), events(6, 11)]) publisher.publishBatch(scanBatchOf(batch))
    await publisher.flush()
    await source.stop()
    expect(applied.flat()).toEqual(events(1, 11))
    // Whole batches: 2 + 2, then 1 (the next would pass 4), then 6 alone (a batch is never split).
    expect(applied.map((scans) => scans.length)).toEqual([4, 1, 6])
  })

  it('hands the batches\' text on unread, with their count, when given applyTexts', async () => {
    const texts: [readonly string[], number][] = []
    const source = createBusScanSource(bus, { lingerMs: 20 })
    await source.start(() => Promise.reject(new Error('not this one')), undefined, async (batch, count) => void texts.push([batch, count]))
    await handOver(events(1, 2))
    await bus.publish(SCAN_BATCH_EVENT, { events: 'not json', codes: 'Code0001', count: 1 })
    await source.stop()
    expect(texts).toEqual([[[JSON.stringify(events(1, 2)), 'not json'], 3]])
  })

  it('passes batches whose codes no one wants by unread, and reads the others (a failed question counts as wanted)', async () => {
    const applied: unknown[] = []
    const asked: string[][] = []
    const source = createBusScanSource(bus, { lingerMs: 0 })
    await source.start(
      async (scans) => void applied.push(...scans),
      async (codes) => {
        asked.push([...codes])
        if (codes.includes('Broken12')) throw new Error('directory down')
        return codes.includes('Wanted12')
      },
    )
    await bus.publish(SCAN_BATCH_EVENT, { events: 'not json', codes: 'Unwanted', count: 1 })
    await Bun.sleep(10)
    await handOver([event(1, 'Wanted12'), event(2, 'Unwanted')])
    await Bun.sleep(10)
    await handOver([event(3, 'Broken12')])
    await source.stop()
    expect(asked).toEqual([['Unwanted'], ['Wanted12', 'Unwanted'], ['Broken12']])
    expect(applied).toEqual([event(1, 'Wanted12'), event(2, 'Unwanted'), event(3, 'Broken12')])
  })

  it('applies what is not a batch, or not a JSON array, as one malformed scan (validation drops it)', async () => {
    const applied: unknown[] = []
    const source = createBusScanSource(bus, { lingerMs: 20 })
    await source.start(async (scans) => void applied.push(...scans))
    await bus.publish(SCAN_BATCH_EVENT, event(1))
    await bus.publish(SCAN_BATCH_EVENT, { events: '{"a":1}', codes: '', count: 1 })
    await bus.publish(SCAN_BATCH_EVENT, { events: '[1,', codes: '', count: 1 })
    await handOver([event(2)])
    await source.stop()
    expect(applied).toEqual([null, null, null, event(2)])
  })

  it('drops the oldest batches beyond maxBuffer scans while the store refuses, each counted in a log line', async () => {
    const log = captureLog()
    let refusing = true
    const applied: unknown[] = []
    const source = createBusScanSource(bus, { maxBuffer: 4, retryMs: 20, lingerMs: 0 })
    try {
      await source.start(async (scans) => {
        if (refusing) throw new Error('store down')
        applied.push(...scans)
      })
      for (const batch of [events(1, 2), events(3, 4), events(5, 6), events(7, 8)]) {
        await handOver(batch)
        await Bun.sleep(1)
      }
      refusing = false
      for (let i = 0; i < 100 && applied.length < 4; i++) await Bun.sleep(10)
      await source.stop()
      expect(applied).toEqual(events(5, 8))
      const dropped = log.lines.filter((line) => line.msg === 'scans dropped: too many waiting to be applied')
      expect(dropped.reduce((sum, line) => sum + line.dropped, 0)).toBe(4)
      // Refused every 20 ms: one line for them all (at most one per 10 s), and one when it ends.
      const retried = log.lines.filter((line) => line.msg === 'scans not applied, retrying')
      expect(retried).toEqual([expect.objectContaining({ source: 'analytics', err: expect.objectContaining({ message: 'store down' }) })])
      expect(log.lines.filter((line) => line.msg === 'scans applied again')).toEqual([expect.objectContaining({ refused: expect.any(Number) })])
    } finally {
      log.restore()
    }
  })

  const handOverOnePerTurn = async (from: number, to: number) => {
    for (let n = from; n <= to; n++) {
      await handOver([event(n)])
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  it('lets a small batch wait lingerMs for the scans of the next turns: one transaction, not one per turn', async () => {
    const sizes = async (lingerMs: number) => {
      const batches: number[] = []
      const source = createBusScanSource(bus, { lingerMs })
      await source.start(async (scans) => void batches.push(scans.length))
      await handOverOnePerTurn(1, 8)
      for (let i = 0; i < 100 && batches.reduce((a, b) => a + b, 0) < 8; i++) await Bun.sleep(10)
      await source.stop()
      return batches
    }
    expect(await sizes(200)).toEqual([8])
    expect((await sizes(0)).length).toBeGreaterThan(1)
  })

  it('applies a batch of half maxBatch or more without waiting', async () => {
    const applied: number[] = []
    const source = createBusScanSource(bus, { maxBatch: 4, lingerMs: 10_000 })
    await source.start(async (scans) => void applied.push(scans.length))
    await handOver(events(1, 2))
    for (let i = 0; i < 50 && applied.length === 0; i++) await Bun.sleep(10)
    expect(applied).toEqual([2])
    await source.stop()
  })

  it('stops without waiting a linger out, applying what waited', async () => {
    const applied: unknown[] = []
    const source = createBusScanSource(bus, { lingerMs: 10_000 })
    await source.start(async (scans) => void applied.push(...scans))
    await handOver([event(1)])
    await Bun.sleep(5)
    const started = performance.now()
    await source.stop()
    expect([applied, performance.now() - started < 1000]).toEqual([[event(1)], true])
  })

  it('retries a batch the store refused until it is applied', async () => {
    let attempts = 0
    const applied: unknown[] = []
    const source = createBusScanSource(bus, { retryMs: 10 })
    await source.start(async (scans) => {
      if (++attempts < 3) throw new Error('store busy')
      applied.push(...scans)
    })
    await handOver([event(1)])
    for (let i = 0; i < 50 && applied.length === 0; i++) await Bun.sleep(10)
    await source.stop()
    expect([attempts, applied]).toEqual([3, [event(1)]])
  })

  it('applies what is queued before stop resolves, and nothing after', async () => {
    const applied: unknown[] = []
    const source = createBusScanSource(bus)
    await source.start(async (scans) => {
      await Bun.sleep(5)
      applied.push(...scans)
    })
    await handOver([event(1)])
    await Bun.sleep(0)
    await source.stop()
    await handOver([event(2)])
    await Bun.sleep(10)
    expect(applied).toEqual([event(1)])
  })

  it('takes up to maxCatchUp scans a call while more than four maxBatch wait, and maxBatch once caught up', async () => {
    let release: () => void = () => undefined
    const held = new Promise<void>((resolve) => (release = resolve))
    const sizes: number[] = []
    const source = createBusScanSource(bus, { maxBatch: 10, maxCatchUp: 100, lingerMs: 0 })
    await source.start(async (scans) => {
      sizes.push(scans.length)
      if (sizes.length === 1) await held // the consumer is busy: the next 150 scans wait
    })
    await handOver(events(1, 10))
    await Bun.sleep(5)
    for (let n = 11; n <= 160; n += 5) await handOver(events(n, n + 4))
    release()
    await Bun.sleep(5)
    for (let n = 161; n <= 180; n += 5) await handOver(events(n, n + 4)) // 20 waiting: caught up, 10 a call
    for (let i = 0; i < 100 && sizes.reduce((a, b) => a + b, 0) < 180; i++) await Bun.sleep(5)
    await source.stop()
    // 10, then 100 of the 150 waiting (behind), then the 50 left (still more than 4 * 10).
    expect(sizes).toEqual([10, 100, 50, 10, 10])
  })

  describe('with a spool on disk', () => {
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
      const source = createBusScanSource(bus, { maxBuffer: 40, retryMs: 10, lingerMs: 0, spool })
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
      const next = createBusScanSource(bus, { lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
      await next.start(async (scans) => void applied.push(...(scans as ScanEvent[])))
      for (let i = 0; i < 100 && applied.length < expected; i++) await Bun.sleep(10)
      await next.stop()
      return idsOf(applied)
    }

    it('writes what it holds at stop, in memory and on disk, to the spool while the store refuses, and the next source applies every scan', async () => {
      const first = createBusScanSource(bus, { maxBuffer: 10, lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
      await first.start(() => Promise.reject(new Error('store down')))
      // 10 in memory (retried until the stop), 90 on disk already.
      for (let n = 1; n <= 100; n += 10) await handOver(events(n, n + 9))
      expect(await appliedAfterRestart(first, 100)).toEqual(idsOf(events(1, 100)))
    })

    it('says in one line how many scans its stop wrote to the spool', async () => {
      const log = captureLog()
      try {
        const source = createBusScanSource(bus, { lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
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
      const first = createBusScanSource(bus, { lingerMs: 0, stopMs: 50, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
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
        const source = createBusScanSource(bus, { lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
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
        const source = createBusScanSource(bus, { lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 4096 }) })
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
      const source = createBusScanSource(bus, { lingerMs: 0, spool: openScanBatchSpool(dir, { maxBytes: 1 << 24 }) })
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
        const source = createBusScanSource(bus, { lingerMs: 0 })
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
      const source = createBusScanSource(bus, { maxBuffer: 10, retryMs: 10, lingerMs: 0, spool })
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
})
