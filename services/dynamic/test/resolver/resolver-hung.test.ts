import { afterAll, beforeAll, describe, expect, it } from 'bun:test'
import { createLocalBus } from '@lr/platform/bus-local'
import { createNatsBus, type NatsBus } from '@lr/platform/bus-nats'
import { captureLog } from '@lr/platform/testing/log-capture'
import { type Bus, DYNAMIC_SUBJECTS } from '@lr/proto'
import { startNats, type NatsServer } from '../../../../test/harness/nats'
import { skipReason } from '../../../../test/harness/servers'
import { createBusResolver } from '../../src/resolver/bus-feed'
import { BROWSER, KEY } from './fixtures'

/**
 * A dynamic service that takes the lookup and never answers (hung, SIGSTOPped, stuck on its
 * store): the resolver answers a code it does not hold 503 with Retry-After, as README and
 * docs/decisions.md §5 promise for a dynamic service it cannot get an answer from. It had been a
 * 504: the lookup's timeout passed through as the API gateway's status.
 */
const LOOKUP_TIMEOUT_MS = 100
const hang = () => new Promise<never>(() => undefined)

/**
 * Scans a code the resolver does not hold through `bus`: asserts the 503, that it came once the
 * lookup timed out, and that the log line still names the timeout (how an operator tells a hung
 * service from one away).
 */
async function expectUnavailableAfterTimeout(bus: Bus): Promise<void> {
  const resolver = createBusResolver({ bus, trustProxy: 0, visitorHashKey: KEY, lookupTimeoutMs: LOOKUP_TIMEOUT_MS, publishScan: () => undefined })
  const log = captureLog()
  try {
    const started = performance.now()
    const res = await resolver.fetch(new Request('http://short.test/Hung0001', { headers: { 'user-agent': BROWSER } }))
    const waited = performance.now() - started
    expect([res.status, res.headers.get('retry-after'), res.headers.get('content-type'), await res.text()]).toEqual([503, '1', 'text/plain; charset=utf-8', 'Temporarily unavailable, please retry.\n'])
    // Not an answer at once (no responders): the request reached the hung service and timed out.
    expect(waited).toBeGreaterThanOrEqual(LOOKUP_TIMEOUT_MS - 5)
    expect(log.lines.find((line) => line.msg === 'resolver lookup failed')?.err).toMatchObject({ code: 'timeout' })
  } finally {
    log.restore()
    resolver.stop()
  }
}

describe('a resolver whose dynamic service hangs', () => {
  it('answers 503 with Retry-After: 1 once the lookup times out (in-process bus)', async () => {
    const bus = createLocalBus()
    bus.serve(DYNAMIC_SUBJECTS.resolve, hang, { queue: 'dynamic' })
    try {
      await expectUnavailableAfterTimeout(bus)
    } finally {
      await bus.close()
    }
  })
})

const skip = skipReason('nats-server')
describe.skipIf(skip !== null)(`a resolver whose dynamic service hangs, over NATS${skip ? ` (${skip})` : ''}`, () => {
  let nats: NatsServer
  let hungDynamic: NatsBus
  let resolverBus: NatsBus
  beforeAll(async () => {
    nats = await startNats()
    // A dynamic replica that is subscribed and takes every lookup but never replies (as one
    // SIGSTOPped: the server still hands it the requests).
    hungDynamic = await createNatsBus(nats.url, 'dynamic')
    hungDynamic.connection.subscribe(DYNAMIC_SUBJECTS.resolve, { queue: 'dynamic' })
    await hungDynamic.connection.flush()
    resolverBus = await createNatsBus(nats.url, 'resolver')
  })
  afterAll(async () => {
    await resolverBus?.close()
    await hungDynamic?.close()
    await nats?.stop()
  })

  it('answers 503 with Retry-After: 1 once the lookup times out', () => expectUnavailableAfterTimeout(resolverBus))
})
