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

describe('subjectMatches', () => {
  it('matches * as one token and > as the rest', () => {
    expect(subjectMatches('scans.*', 'scans.abc')).toBe(true)
    expect(subjectMatches('scans.*', 'scans.a.b')).toBe(false)
    expect(subjectMatches('scans.>', 'scans.a.b')).toBe(true)
    expect(subjectMatches('scans.>', 'scans')).toBe(false)
    expect(subjectMatches('a.b', 'a.c')).toBe(false)
  })
})
