import { describe, expect, it } from 'bun:test'
import { SCAN_BATCH_EVENT, type ScanBatch, scanBatchOf } from '@lr/proto'
import { createBusScanPublisher } from '@lr/platform/scan-publisher'
import { createBusScanSource } from '@lr/platform/scan-source'
import { captureLog } from './log-capture'
import { event, events, useLocalBus } from './scan-pipeline.fixture'

// The spool's part of createBusScanSource is in scan-source-spool.test.ts.
const { bus, handOver } = useLocalBus()

describe('createBusScanPublisher', () => {
  it('publishes the scans of one turn as one batch on scan-batches, and each on scans.<code> to whoever subscribes there', async () => {
    const each: [string, unknown][] = []
    const batches: unknown[] = []
    bus().subscribe('scans.>', (e, subject) => void each.push([subject, e]))
    bus().subscribe(SCAN_BATCH_EVENT, (batch) => void batches.push(batch))
    const publisher = createBusScanPublisher(bus())
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
    bus().subscribe('scans.Listened', (e) => void each.push(e))
    bus().subscribe(SCAN_BATCH_EVENT, (batch) => void batches.push(batch as ScanBatch))
    const log = captureLog()
    try {
      const publisher = createBusScanPublisher(bus())
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
    const broken = { ...bus(), publish: () => Promise.reject(new Error('down')) }
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
  it('applies the batches of the bus, up to maxBatch scans a call, in order', async () => {
    const applied: unknown[][] = []
    const source = createBusScanSource(bus(), { maxBatch: 4 })
    await source.start(async (scans) => void applied.push(scans))
    const publisher = createBusScanPublisher(bus())
    for (const batch of [events(1, 2), events(3, 4), events(5, 5), events(6, 11)]) publisher.publishBatch(scanBatchOf(batch))
    await publisher.flush()
    await source.stop()
    expect(applied.flat()).toEqual(events(1, 11))
    // Whole batches: 2 + 2, then 1 (the next would pass 4), then 6 alone (a batch is never split).
    expect(applied.map((scans) => scans.length)).toEqual([4, 1, 6])
  })

  it('hands the batches\' text on unread, with their count, when given applyTexts', async () => {
    const texts: [readonly string[], number][] = []
    const source = createBusScanSource(bus(), { lingerMs: 20 })
    await source.start(() => Promise.reject(new Error('not this one')), undefined, async (batch, count) => void texts.push([batch, count]))
    await handOver(events(1, 2))
    await bus().publish(SCAN_BATCH_EVENT, { events: 'not json', codes: 'Code0001', count: 1 })
    await source.stop()
    expect(texts).toEqual([[[JSON.stringify(events(1, 2)), 'not json'], 3]])
  })

  it('passes batches whose codes no one wants by unread, and reads the others (a failed question counts as wanted)', async () => {
    const applied: unknown[] = []
    const asked: string[][] = []
    const source = createBusScanSource(bus(), { lingerMs: 0 })
    await source.start(
      async (scans) => void applied.push(...scans),
      async (codes) => {
        asked.push([...codes])
        if (codes.includes('Broken12')) throw new Error('directory down')
        return codes.includes('Wanted12')
      },
    )
    await bus().publish(SCAN_BATCH_EVENT, { events: 'not json', codes: 'Unwanted', count: 1 })
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
    const source = createBusScanSource(bus(), { lingerMs: 20 })
    await source.start(async (scans) => void applied.push(...scans))
    await bus().publish(SCAN_BATCH_EVENT, event(1))
    await bus().publish(SCAN_BATCH_EVENT, { events: '{"a":1}', codes: '', count: 1 })
    await bus().publish(SCAN_BATCH_EVENT, { events: '[1,', codes: '', count: 1 })
    await handOver([event(2)])
    await source.stop()
    expect(applied).toEqual([null, null, null, event(2)])
  })

  it('drops the oldest batches beyond maxBuffer scans while the store refuses, each counted in a log line', async () => {
    const log = captureLog()
    let refusing = true
    const applied: unknown[] = []
    const source = createBusScanSource(bus(), { maxBuffer: 4, retryMs: 20, lingerMs: 0 })
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
      const source = createBusScanSource(bus(), { lingerMs })
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
    const source = createBusScanSource(bus(), { maxBatch: 4, lingerMs: 10_000 })
    await source.start(async (scans) => void applied.push(scans.length))
    await handOver(events(1, 2))
    for (let i = 0; i < 50 && applied.length === 0; i++) await Bun.sleep(10)
    expect(applied).toEqual([2])
    await source.stop()
  })

  it('stops without waiting a linger out, applying what waited', async () => {
    const applied: unknown[] = []
    const source = createBusScanSource(bus(), { lingerMs: 10_000 })
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
    const source = createBusScanSource(bus(), { retryMs: 10 })
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
    const source = createBusScanSource(bus())
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
    const source = createBusScanSource(bus(), { maxBatch: 10, maxCatchUp: 100, lingerMs: 0 })
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
})
