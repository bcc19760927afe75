import { afterEach, beforeEach, describe, expect, it } from 'bun:test'
import { type Bus } from '@lr/proto'
import { createLocalBus } from '@lr/platform/bus-local'
import { createBusScanPublisher } from '@lr/platform/scan-publisher'
import { createBusScanSource } from '@lr/platform/scan-source'
import type { ScanEvent } from '@lr/proto'

const event = (n: number, code = 'Code0001'): ScanEvent => ({
  scan_id: `scan-${n}`, code, scanned_at: 1_736_510_400_000 + n, user_agent: 'UA', visitor_id: 'a'.repeat(64), country: 'DE',
})

let bus: Bus
beforeEach(() => {
  bus = createLocalBus()
})
afterEach(() => bus.close())

describe('createBusScanPublisher', () => {
  it('publishes each scan on scans.<code>', async () => {
    const seen: [string, unknown][] = []
    bus.subscribe('scans.>', (e, subject) => void seen.push([subject, e]))
    const publisher = createBusScanPublisher(bus)
    publisher.publish(event(1, 'AbcDef12'))
    await publisher.flush()
    await Bun.sleep(0)
    expect(seen).toEqual([['scans.AbcDef12', event(1, 'AbcDef12')]])
    expect(publisher.pending()).toBe(0)
  })

  it('never throws, even when the bus fails', async () => {
    const broken = { ...bus, publish: () => Promise.reject(new Error('down')) }
    const publisher = createBusScanPublisher(broken)
    expect(() => publisher.publish(event(1))).not.toThrow()
    await publisher.flush()
    expect(publisher.pending()).toBe(0)
  })
})

describe('createBusScanSource', () => {
  it('applies scans published on the bus in batches, in order', async () => {
    const batches: unknown[][] = []
    const source = createBusScanSource(bus, { maxBatch: 2 })
    await source.start(async (events) => void batches.push(events))
    const publisher = createBusScanPublisher(bus)
    for (let n = 1; n <= 5; n++) publisher.publish(event(n))
    await publisher.flush()
    await source.stop()
    expect(batches.flat()).toEqual([1, 2, 3, 4, 5].map((n) => event(n)))
    expect(batches.every((b) => b.length <= 2)).toBe(true)
  })

  const handOverOnePerTurn = async (from: number, to: number) => {
    for (let n = from; n <= to; n++) {
      await bus.publish('scans.Code0001', event(n))
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  it('lets a small batch wait lingerMs for the scans of the next turns: one transaction, not one per turn', async () => {
    const sizes = async (lingerMs: number) => {
      const batches: number[] = []
      const source = createBusScanSource(bus, { lingerMs })
      await source.start(async (events) => void batches.push(events.length))
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
    await source.start(async (events) => void applied.push(events.length))
    for (let n = 1; n <= 2; n++) await bus.publish('scans.Code0001', event(n))
    for (let i = 0; i < 50 && applied.length === 0; i++) await Bun.sleep(10)
    expect(applied).toEqual([2])
    await source.stop()
  })

  it('stops without waiting a linger out, applying what waited', async () => {
    const applied: unknown[] = []
    const source = createBusScanSource(bus, { lingerMs: 10_000 })
    await source.start(async (events) => void applied.push(...events))
    await bus.publish('scans.Code0001', event(1))
    await Bun.sleep(5)
    const started = performance.now()
    await source.stop()
    expect([applied, performance.now() - started < 1000]).toEqual([[event(1)], true])
  })

  it('retries a batch the store refused until it is applied', async () => {
    let attempts = 0
    const applied: unknown[] = []
    const source = createBusScanSource(bus, { retryMs: 10 })
    await source.start(async (events) => {
      if (++attempts < 3) throw new Error('store busy')
      applied.push(...events)
    })
    await bus.publish('scans.Code0001', event(1))
    for (let i = 0; i < 50 && applied.length === 0; i++) await Bun.sleep(10)
    await source.stop()
    expect([attempts, applied]).toEqual([3, [event(1)]])
  })

  it('applies what is queued before stop resolves, and nothing after', async () => {
    const applied: unknown[] = []
    const source = createBusScanSource(bus)
    await source.start(async (events) => {
      await Bun.sleep(5)
      applied.push(...events)
    })
    await bus.publish('scans.Code0001', event(1))
    await Bun.sleep(0)
    await source.stop()
    await bus.publish('scans.Code0001', event(2))
    await Bun.sleep(10)
    expect(applied).toEqual([event(1)])
  })
})
