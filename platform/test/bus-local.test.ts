import { createLocalBus } from '@lr/platform/bus-local'
import { subjectMatches } from '@lr/platform/bus-handler'
import { describe, expect, it } from 'bun:test'
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

describe('subjectMatches', () => {
  it('matches * as one token and > as the rest', () => {
    expect(subjectMatches('scans.*', 'scans.abc')).toBe(true)
    expect(subjectMatches('scans.*', 'scans.a.b')).toBe(false)
    expect(subjectMatches('scans.>', 'scans.a.b')).toBe(true)
    expect(subjectMatches('scans.>', 'scans')).toBe(false)
    expect(subjectMatches('a.b', 'a.c')).toBe(false)
  })
})
