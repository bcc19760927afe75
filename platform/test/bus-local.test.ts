import { createLocalBus } from '@lr/platform/bus-local'
import { subjectMatches } from '@lr/platform/bus-handler'
import { describe, expect, it } from 'bun:test'
import { busContract } from './bus.contract'

// One in-process bus is the transport; each "connection" is the same bus.
busContract('in-process', async () => {
  const bus = createLocalBus()
  return { connect: async () => ({ ...bus, close: async () => {} }), teardown: () => bus.close() }
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
