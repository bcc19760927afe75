import { createLocalBus } from '@lr/platform/bus-local'
import { subjectMatches } from '@lr/platform/bus-handler'
import { describe, expect, it } from 'bun:test'
import { captureLog } from './log-capture'
import { busContract, CONTRACT_MAX_PAYLOAD } from './bus.contract'

// One in-process bus is the transport; each "connection" is the same bus.
busContract('in-process', async () => {
  const bus = createLocalBus({ maxPayload: CONTRACT_MAX_PAYLOAD })
  return { connect: async () => ({ ...bus, close: async () => {} }), teardown: () => bus.close() }
})

describe('the in-process bus after close', () => {
  it('fails its ping and answers requests with 503, as a closed NATS connection does', async () => {
    const bus = createLocalBus()
    bus.serve('t.v1.echo', async (p) => p)
    expect(await bus.ping()).toBe(true)
    await bus.close()
    expect(await bus.ping()).toBe(false)
    expect(await bus.request('t.v1.echo', {}).catch((error) => error.status)).toBe(503)
  })
})

describe('the in-process bus, a failing subscriber', () => {
  it('logs a handler that throws and one that rejects, and still delivers the event to the others', async () => {
    const { lines, restore } = captureLog()
    try {
      const bus = createLocalBus()
      const seen: unknown[] = []
      bus.subscribe('e.*', () => {
        throw new Error('sync')
      })
      bus.subscribe('e.>', async () => {
        throw new Error('async')
      })
      bus.subscribe('e.x', (event) => void seen.push(event))
      await bus.publish('e.x', { n: 1 })
      await Bun.sleep(0)
      expect(seen).toEqual([{ n: 1 }])
      expect(lines.map((l) => [l.msg, l.pattern]).sort()).toEqual([['bus subscriber failed', 'e.*'], ['bus subscriber failed', 'e.>']])
      await bus.close()
    } finally {
      restore()
    }
  })
})

describe('the in-process bus, publish settled', () => {
  it('resolves once every subscriber\'s handler has settled, its promise too; a plain publish does not wait', async () => {
    const bus = createLocalBus()
    const done: string[] = []
    let release!: () => void
    const slow = new Promise<void>((resolve) => (release = resolve))
    bus.subscribe('c.*', async (event) => {
      await slow
      done.push(`slow ${(event as { n: number }).n}`)
    })
    bus.subscribe('c.x', (event) => void done.push(`quick ${(event as { n: number }).n}`))
    await bus.publish('c.x', { n: 1 })
    await Bun.sleep(10)
    expect(done).toEqual(['quick 1']) // the slow handler is still at it
    const settled = bus.publish('c.x', { n: 2 }, { settled: true })
    await Bun.sleep(10)
    expect(done).toEqual(['quick 1', 'quick 2'])
    expect(await Promise.race([settled.then(() => 'settled'), Bun.sleep(10).then(() => 'waiting')])).toBe('waiting')
    release()
    await settled
    expect(done.sort()).toEqual(['quick 1', 'quick 2', 'slow 1', 'slow 2'])
    await bus.close()
  })

  it('logs a failing handler and still resolves', async () => {
    const { lines, restore } = captureLog()
    try {
      const bus = createLocalBus()
      bus.subscribe('f.x', async () => {
        throw new Error('async')
      })
      bus.subscribe('f.*', () => {
        throw new Error('sync')
      })
      await bus.publish('f.x', {}, { settled: true })
      expect(lines.map((l) => [l.msg, l.pattern]).sort()).toEqual([['bus subscriber failed', 'f.*'], ['bus subscriber failed', 'f.x']])
      await bus.close()
    } finally {
      restore()
    }
  })
})

describe('subjectMatches', () => {
  it('matches * as one token and > as the rest', () => {
    expect(subjectMatches('scans.*', 'scans.abc')).toBe(true)
    expect(subjectMatches('scans.*', 'scans.a.b')).toBe(false)
    expect(subjectMatches('scans.>', 'scans.a.b')).toBe(true)
    expect(subjectMatches('scans.>', 'scans')).toBe(false)
    expect(subjectMatches('a.b', 'a.c')).toBe(false)
  })
})
